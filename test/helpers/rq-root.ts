// Test harness: temp roots, queue dirs, real queue processes driven over their sockets.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { queueCommand } from '../../src/ipc/rq1.js';
import { queuePaths } from '../../src/config/paths.js';
import { browsersRefusePort } from '../../src/config/browser-ports.js';
import { notInheritedArgs, queueEnv, queueNodeFlags } from '../../src/queue/node-flags.js';
import { killAll, ownCgroupHome, removeCgroup } from '../../src/queue/launch/cgroup-fs.js';
import { parentCgroupName } from '../../src/queue/launch/run-cgroups.js';
import { ownV1Homes } from '../../src/queue/launch/cgroup-v1.js';
import { endAndRemove } from '../../src/queue/launch/limit-files.js';

export const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = path.join(PROJECT, 'test', 'fixtures');
export const VERBS_SH = path.join(FIXTURES, 'scripts', 'verbs.sh');
export const VERBS_PY = path.join(FIXTURES, 'scripts', 'verbs.py');
export const VERBS_NODE = path.join(FIXTURES, 'scripts', 'verbs.mjs');

export interface TestRoot {
  root: string;
  port: number;
  cleanup(): Promise<void>;
}

/** The kernel's ephemeral range: where it picks the local port of every outgoing connection. */
function ephemeralLow(): number {
  const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > 2000 ? low : 32768;
}

/** How many parts the test ports are split into, one a vitest worker (VITEST_POOL_ID): more than the suite runs at once. */
const PORT_SLOTS = 8;
/** Ports this process has handed out: a daemon may bind one a while after it was checked free. */
const handedOut = new Set<number>();

/** The ports freePort picks from in this process: its vitest worker's part of 10000..(the ephemeral range), or all of it outside vitest. */
export function workerPorts(): { low: number; high: number } {
  const pool = Number(process.env.VITEST_POOL_ID);
  if (!Number.isInteger(pool) || pool <= 0) return { low: 10_000, high: ephemeralLow() - 1 };
  const span = Math.floor((ephemeralLow() - 10_000) / PORT_SLOTS);
  const low = 10_000 + ((pool - 1) % PORT_SLOTS) * span;
  return { low, high: low + span - 1 };
}

/**
 * A loopback port nobody listens on right now (tests run in parallel, each root gets its own), below
 * the ephemeral range. A port the kernel handed out (listen on 0) was free only until released: the
 * next outgoing connection of any test could take it as its own local port, and the daemon that
 * was to listen on it later failed with EADDRINUSE (browser/bulk under load). Outgoing connections
 * never take a port below the range. A port checked free is bound by rq only later (rq-mgr starts
 * its web), so two picks of one port would both pass the check, and one test would talk to the
 * other's rq: each worker picks from a part of the range of its own, and never the same port twice.
 */
export async function freePort(): Promise<number> {
  const { low, high } = workerPorts();
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    // fetch and browsers refuse to connect to some ports (10080 is the one above 10,000).
    if (browsersRefusePort(port) || handedOut.has(port)) continue;
    const srv = net.createServer();
    const ok = await new Promise<boolean>((r) => {
      srv.once('error', () => r(false));
      srv.listen(port, '127.0.0.1', () => r(true));
    });
    if (!ok) continue;
    await new Promise((r) => srv.close(r));
    handedOut.add(port);
    return port;
  }
}

/** A fresh root with config/config.json and the runtime folders. */
export async function makeRoot(opts: { port?: number; relativeRoot?: string } = {}): Promise<TestRoot> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-test-'));
  for (const d of ['config', 'queues', 'scandir', 'timers', 'log']) await fsp.mkdir(path.join(root, d));
  const port = opts.port ?? (await freePort());
  const config: Record<string, unknown> = { env: 'test', host: '127.0.0.1', port, addr: '127.0.0.1' };
  if (opts.relativeRoot) config.relative_root = opts.relativeRoot;
  await fsp.writeFile(path.join(root, 'config', 'config.json'), JSON.stringify(config) + '\n');
  return {
    root,
    port,
    cleanup: async () => {
      await removeRunCgroups(root);
      await fsp.rm(root, { recursive: true, force: true });
    },
  };
}

/**
 * Kills and removes the cgroups of the root's queues: a queue stopped cleanly has removed its own,
 * one a test SIGKILLed leaves them (its next start would clear them), and the root is going away.
 */
async function removeRunCgroups(root: string): Promise<void> {
  const home = ownCgroupHome();
  const v1 = [...new Set(Object.values(ownV1Homes()).flatMap((h) => ('dir' in h ? [h.dir] : [])))];
  const queues = await fsp.readdir(path.join(root, 'queues')).catch(() => [] as string[]);
  for (const queue of queues) {
    let name: string;
    try {
      name = parentCgroupName(queue, path.join(root, 'queues', queue));
    } catch {
      continue; // Not a queue directory (a dangling link a test made).
    }
    // The queue's cgroup, and the one of its runs with limits cgroup v2 enforces.
    for (const d of home.ok ? [name, `${name}-limits`].map((n) => path.join(home.dir, n)) : []) {
      if (!fs.existsSync(d)) continue;
      killAll(d);
      await removeCgroup(d, 10_000);
    }
    // Its cgroups in each writable v1 hierarchy (run limits there), runs first.
    for (const d of v1.map((h) => path.join(h, name)).filter((d) => fs.existsSync(d))) {
      const runs = fs.readdirSync(d, { withFileTypes: true }).filter((e) => e.isDirectory());
      await endAndRemove([...runs.map((e) => path.join(d, e.name)), d]);
    }
  }
}

export interface QueueDef {
  script?: string;
  num_workers?: number;
  exec_prefix?: string | null;
  env_vars?: Record<string, string>;
  coalesce_params?: number[];
  blocking_params?: number[];
  /** Further config.json keys (run-policy defaults: retry, timeout, kill_grace…). */
  extra?: Record<string, unknown>;
}

/** Creates queues/<name>/ with a config.json (scripts default to the bash verbs fixture, no prefix). */
export async function addQueue(root: string, name: string, def: QueueDef = {}): Promise<void> {
  const p = queuePaths(root, name);
  await fsp.mkdir(p.dir, { recursive: true });
  for (const s of Object.values(p.state)) await fsp.mkdir(s, { recursive: true });
  const config = {
    name,
    script: def.script ?? VERBS_SH,
    num_workers: def.num_workers ?? 1,
    exec_prefix: def.exec_prefix === undefined ? '' : def.exec_prefix,
    env_vars: def.env_vars ?? {},
    coalesce_params: def.coalesce_params ?? [],
    blocking_params: def.blocking_params ?? [],
  };
  if (config.exec_prefix === null) delete (config as Record<string, unknown>).exec_prefix;
  await fsp.writeFile(p.configFile, JSON.stringify({ ...config, ...def.extra }));
}

/**
 * Waits until the probe gives a truthy value and returns it. 0, '' and null keep it waiting like
 * false: a probe that read a pid as 0 once returned it, and the kill of -0 ended the whole run.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  label: string,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v as T;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A real queue process (dist/queue/queue-main.js) for one queue of a root. */
export class QueueProc {
  private constructor(
    readonly root: string,
    readonly name: string,
    readonly child: ChildProcess,
  ) {}

  /** `wrap`: a command that execs the rest of its argv (e.g. prlimit), so the child's pid stays the queue's. */
  static async start(root: string, name: string, opts: { env?: NodeJS.ProcessEnv; wrap?: string[] } = {}): Promise<QueueProc> {
    const logFd = fs.openSync(path.join(root, 'log', `queue-${name}.log`), 'a');
    const { env, notInherited } = queueEnv({ ...process.env, RQ_LOG_LEVEL: 'debug', ...opts.env });
    const main = path.join(PROJECT, 'dist', 'queue', 'queue-main.js');
    const argv = [process.execPath, ...queueNodeFlags(), main, '--root', root, '--name', name, '--watch-stdin', ...notInheritedArgs(notInherited)];
    const [cmd, ...args] = [...(opts.wrap ?? []), ...argv];
    const child = spawn(cmd, args, { stdio: ['pipe', logFd, logFd], env });
    fs.closeSync(logFd);
    const q = new QueueProc(root, name, child);
    let exited = false;
    child.once('exit', () => (exited = true));
    await waitFor(async () => {
      if (exited) throw new Error(`queue process exited; see ${path.join(root, 'log', `queue-${name}.log`)}`);
      return (await q.cmd('ping'))?.[0] === 'pong';
    }, `queue ${name} to answer ping`);
    // ping answers during the recovery scan; num_messages waits for it to finish (a deep que takes a while).
    await queueCommand(q.paths.sock, 'num_messages', {}, { timeoutMs: 600_000 });
    return q;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get paths() {
    return queuePaths(this.root, this.name);
  }

  // Replies are JSON of many shapes; tests index into them freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  cmd(command: string, arg?: unknown): Promise<any> {
    return queueCommand(this.paths.sock, command, arg ?? {}, { timeoutMs: 10_000 });
  }

  /** Sends a message and returns its short id. */
  async send(fields: Record<string, unknown>): Promise<string> {
    const reply = await this.cmd('create_message', { dest: this.name, ...fields });
    if (reply[0] !== 'ok') throw new Error(`create_message failed: ${JSON.stringify(reply)}`);
    return String(reply[1]).split('/').pop()!;
  }

  async state(id: string): Promise<string> {
    const r = await this.cmd('get_message_state', { msg_id: id });
    return r[0] === 'ok' ? r[1] : `missing:${r[1]}`;
  }

  /** Waits until the message reaches one of the given states and returns get_message. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async waitState(id: string, states: string[], timeoutMs = 10_000): Promise<any> {
    await waitFor(async () => states.includes(await this.state(id)), `${id} to reach ${states.join('|')}`, timeoutMs);
    return (await this.cmd('get_message', { msg_id: id }))[1];
  }

  exited(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((r) => this.child.once('exit', () => r()));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    await this.exited();
  }

  async kill9(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited();
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}
