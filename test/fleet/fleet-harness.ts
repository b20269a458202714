// Test harness for fleets: rq roots joined to a real etcd, one member or a cluster (test/helpers/etcd.ts), each with its own rq-mgr, and what etcd holds of them.
import fs from 'node:fs';
import path from 'node:path';
import { addQueue, makeRoot, waitFor, type TestRoot } from '../helpers/rq-root.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { fleetKeys } from '../../src/fleet/fleet-keys.js';
import { type HostRecord, isHostRecord } from '../../src/ipc/fleet-reply.js';

export const FLEET = 'test';
/** Short, so an expiry is seen within seconds; etcd grants no lease under about 1.5 s. */
export const TTL_S = 2;
export const KEYS = fleetKeys(FLEET);

export interface Host {
  name: string;
  root: TestRoot;
  mgr: MgrProc;
}

/**
 * What a host's `fleet` names beside its name: etcd's client URLs (one, or a cluster's), its lease TTL
 * (default TTL_S), and more fields of the block (`etcd_ca`, `etcd_user`, ...).
 */
export type HostEtcd = string | string[] | { urls: string[]; leaseTtlS?: number; fields?: Record<string, unknown> };

/** A root whose config.json joins the fleet as `name`, with queue q1 (2 workers) and what `setup` adds; no rq-mgr started. */
export async function fleetRoot(name: string, etcd: HostEtcd, setup?: (root: string) => Promise<void>): Promise<TestRoot> {
  const { urls, leaseTtlS = TTL_S, fields = {} } = typeof etcd === 'string' ? { urls: [etcd] } : Array.isArray(etcd) ? { urls: etcd } : etcd;
  const root = await makeRoot();
  const file = path.join(root.root, 'config', 'config.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  config.fleet = { name: FLEET, etcd: urls, host: name, advertise: `http://127.0.0.1:${root.port}/`, lease_ttl_s: leaseTtlS, ...fields };
  fs.writeFileSync(file, JSON.stringify(config));
  await addQueue(root.root, 'q1', { num_workers: 2 });
  await setup?.(root.root);
  return root;
}

/** fleetRoot's root with its rq-mgr started. */
export async function startHost(name: string, etcd: HostEtcd, setup?: (root: string) => Promise<void>): Promise<Host> {
  const root = await fleetRoot(name, etcd, setup);
  const mgr = await MgrProc.start(root.root);
  return { name, root, mgr };
}

/**
 * A host's crash: SIGKILL of its rq-mgr and of every daemon it started (queues, web, timers: each is
 * started with `--root <root>`); its scripts are left running, as a crash leaves them.
 */
export function killHost(h: Host): Promise<void> {
  return killRoot(h.root.root, h.mgr.child.pid!, h.name);
}

/** killHost for any root: `mgrPid` and every process started with `--root <root>`, dead before it returns. */
export async function killRoot(root: string, mgrPid: number, name: string = root): Promise<void> {
  const pids = [mgrPid];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const argv = (() => {
      try {
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      } catch {
        return [];
      }
    })();
    if (argv.some((a, i) => a === '--root' && argv[i + 1] === root)) pids.push(Number(entry));
  }
  for (const pid of new Set(pids)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  // Dead (a zombie or reaped) before the test goes on, so nothing of the old host answers its sockets.
  await waitFor(() => pids.every(dead), `${name}'s processes to die`);
}

/** Whether `pid` has ended: reaped, or a zombie not yet reaped. */
function dead(pid: number): boolean {
  try {
    return fs
      .readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .startsWith('Z');
  } catch {
    return true;
  }
}

/** Waits until the host's web answers /healthz with 200. */
export function webUp(h: Host): Promise<boolean> {
  return waitFor(async () => (await fetch(`http://127.0.0.1:${h.root.port}/healthz`).catch(() => null))?.status === 200, `${h.name}'s web`);
}

/** The end of a host's rq-mgr log (its daemons' lines), for a failed assertion's message. */
export function logTail(h: Host, lines = 40): string {
  try {
    return fs
      .readFileSync(path.join(h.root.root, 'log', 'mgr-test.log'), 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n');
  } catch (err) {
    return `(no log: ${(err as Error).message})`;
  }
}

export async function stopHost(h: Host | undefined): Promise<void> {
  if (!h) return;
  await h.mgr.stop();
  await h.root.cleanup();
}

/** A test's end: its hosts stopped, then its etcd client, its etcd and its TLS files (what was never made is skipped). */
export async function stopFleet(
  hosts: Host[],
  store: EtcdStore | undefined,
  etcd: { cleanup(): Promise<void> } | undefined,
  certs?: { cleanup(): void },
): Promise<void> {
  for (const h of hosts) await stopHost(h);
  store?.close();
  await etcd?.cleanup();
  certs?.cleanup();
}

/** The host records etcd holds now, by host name. */
export async function hostRecords(store: EtcdStore): Promise<Record<string, HostRecord>> {
  const out: Record<string, HostRecord> = {};
  for (const kv of await store.getPrefix(KEYS.hosts)) {
    const v: unknown = JSON.parse(kv.value);
    if (isHostRecord(v)) out[v.host] = v;
  }
  return out;
}

/** Waits until `host`'s record satisfies `ok`; returns it. */
export function recordWhere(store: EtcdStore, host: string, ok: (r: HostRecord) => boolean, label: string, timeoutMs = 10_000): Promise<HostRecord> {
  return waitFor(
    async () => {
      const r = (await hostRecords(store))[host];
      return r && ok(r) ? r : null;
    },
    `${host}'s record: ${label}`,
    timeoutMs,
    50,
  );
}

/** rq-mgr's log lines of a root that contain `text`. */
export function logLines(h: Host, text: string): string[] {
  return fs
    .readFileSync(path.join(h.root.root, 'log', 'mgr-test.log'), 'utf8')
    .split('\n')
    .filter((l) => l.includes(text));
}
