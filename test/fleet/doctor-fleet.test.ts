// rq doctor on fleet hosts, against a real etcd and real hosts: a name held by another rq, etcd out of reach, and an advertise URL that leads elsewhere are problems; a sound host has none.
import fs from 'node:fs/promises';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { runRq } from '../helpers/rq-cli.js';
import { freePort, waitFor } from '../helpers/rq-root.js';
import { rootPaths } from '../../src/config/paths.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import type { Finding } from '../../src/mgr/doctor.js';
import { FLEET, type Host, type HostEtcd, fleetRoot, startHost, stopFleet, webUp } from './fleet-harness.js';

let etcd: EtcdProc;
let a: Host;
const others: Host[] = [];

/** Until rq-mgr's web process has run 5 s: before, the doctor leaves its advertise URL alone (it may not listen yet). */
const webSettled = (h: Host) =>
  waitFor(async () => {
    const w = await new MgrClient(rootPaths(h.root.root).mgrSock).status();
    const web = w.ok ? w.value['[web]'] : undefined;
    return web?.status === 'RUNNING' && (web.uptime ?? 0) >= 5;
  }, `${h.name}'s web up 5 s`);

/** A host started beside `a` (`setup` edits its root first), once its rq-mgr says it is in `state` in the fleet. */
async function hostIn(state: string, name: string, e: HostEtcd, setup?: (root: string) => Promise<void>): Promise<Host> {
  const root = await fleetRoot(name, e, setup);
  const h = { name, root, mgr: await MgrProc.start(root.root) };
  others.push(h);
  const mgr = new MgrClient(rootPaths(root.root).mgrSock);
  await waitFor(async () => {
    const v = await mgr.fleet();
    return v.ok && v.value.member.state === state;
  }, `${name} ${state}`);
  return h;
}

/** What `rq doctor --json` lists on `h`: the fleet's findings, every finding's subject, and its exit. */
async function doctorOn(h: Host): Promise<{ code: number; fleet: Finding[]; subjects: string[] }> {
  const r = await runRq(['doctor', '--json'], { root: h.root.root });
  const report = JSON.parse(r.out[0]) as { findings: Finding[] };
  return { code: r.code, fleet: report.findings.filter((f) => f.subject === 'fleet'), subjects: report.findings.map((f) => f.subject) };
}

/** `rq fleet` on `h` (its exit, its header line, its membership's reason) and its web's /healthz (status and body). */
async function fleetSays(h: Host) {
  const r = await runRq(['fleet'], { root: h.root.root });
  const json = await runRq(['fleet', '--json'], { root: h.root.root });
  const res = await waitFor(() => fetch(`http://127.0.0.1:${h.root.port}/healthz`).catch(() => null), `${h.name}'s web to answer`);
  const health = { ...((await res.json()) as { checked: string[]; failing: unknown[] }), http: res.status };
  return { code: r.code, head: r.out[0], reason: (JSON.parse(json.out[0]) as { member: { reason?: string } }).member.reason, health };
}

/** Edits the root's config.json. */
const configured = (edit: (c: Record<string, unknown>) => void) => async (root: string) => {
  const file = rootPaths(root).configFile;
  const c = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
  edit(c);
  // Passwords in it: readable by its owner only, as rq-install writes it.
  await fs.writeFile(file, JSON.stringify(c), { mode: 0o600 });
  await fs.chmod(file, 0o600);
};

describe('rq doctor in a fleet', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    a = await startHost('a', etcd.url);
    await webUp(a);
  }, 60_000);
  afterAll(() => stopFleet([a, ...others], undefined, etcd), 60_000);

  it('a member whose advertise URL leads back to it: no fleet finding, with basic_auth and a relative_root too', async () => {
    const b = await hostIn(
      'member',
      'b',
      etcd.url,
      configured((c) => {
        c.basic_auth = { users: { bob: 'pw-bob' } };
        c.relative_root = '/rq';
        (c.fleet as Record<string, unknown>).advertise = `http://127.0.0.1:${c.port}/rq/`;
      }),
    );
    await Promise.all([webSettled(a), webSettled(b)]);
    expect(await doctorOn(a)).toMatchObject({ code: 0, fleet: [] });
    expect(await doctorOn(b)).toMatchObject({ code: 0, fleet: [] });
    expect(await fleetSays(a)).toMatchObject({ code: 0, health: { http: 200, checked: expect.not.arrayContaining(['fleet']) } });
  });

  it("a second rq under a's name: refused, said with the holder and the fix", async () => {
    const dup = await hostIn('refused', 'a', etcd.url);
    const r = await doctorOn(dup);
    expect(r.code).toBe(1);
    expect(r.fleet).toEqual([
      {
        severity: 'problem',
        subject: 'fleet',
        reason: expect.stringMatching(new RegExp(`^this host \\(a in fleet ${FLEET}\\) is refused: .*http://127\\.0\\.0\\.1:${a.root.port}`)),
        fix: expect.stringContaining('give this host a name no other rq of the fleet uses'),
      },
    ]);
    // A host outside its fleet by a fault of its setup: rq fleet exits 1 after the view, and a load balancer's /healthz fails.
    const said = await fleetSays(dup);
    expect(said.code).toBe(1);
    expect(said.head).toBe(`fleet ${FLEET}: this host is a (refused: ${said.reason})`);
    expect(said.health).toMatchObject({
      http: 503,
      checked: expect.arrayContaining(['fleet']),
      // The reason names the holder, as rq fleet says it.
      failing: [
        { name: 'fleet', error: `this host (a in fleet ${FLEET}) is refused: ${said.reason}; it takes no part in the fleet (rq doctor says how to fix it)` },
      ],
    });
  });

  it("advertised at another host's web: says which rq answers there, and the fix names addr and port too", async () => {
    const c = await hostIn('member', 'c', { urls: [etcd.url], fields: { advertise: `http://127.0.0.1:${a.root.port}/` } });
    await webSettled(c);
    const r = await doctorOn(c);
    expect(r.code).toBe(1);
    expect(r.fleet).toHaveLength(1);
    expect(r.fleet[0].reason).toBe(
      `this host (c in fleet ${FLEET}) is advertised at http://127.0.0.1:${a.root.port}, where another rq answers (a in fleet ${FLEET}): ` +
        'the other hosts cannot deliver pool messages to it nor ask it of dependencies',
    );
    expect(r.fleet[0].fix).toContain('set "advertise" in the fleet block of');
    expect(r.fleet[0].fix).toContain('and "addr" and "port" to where the web listens');
  });

  it('advertised where nothing listens: says the connection was refused', async () => {
    const port = await freePort();
    const d = await hostIn('member', 'd', { urls: [etcd.url], fields: { advertise: `http://127.0.0.1:${port}/` } });
    await webSettled(d);
    expect((await doctorOn(d)).fleet.map((f) => f.reason)).toEqual([
      expect.stringContaining(`is advertised at http://127.0.0.1:${port}, which does not answer (ECONNREFUSED)`),
    ]);
  });

  it("its web's port held by another program: the web's problem alone, not advertise's", async () => {
    const root = await fleetRoot('e', etcd.url);
    const squatter = http.createServer((_req, res) => res.writeHead(404).end('not rq'));
    await new Promise<void>((resolve) => squatter.listen(root.port, '127.0.0.1', resolve));
    try {
      const h = { name: 'e', root, mgr: await MgrProc.start(root.root) };
      others.push(h);
      await waitFor(async () => (await doctorOn(h)).subjects.includes('web'), "the web's problem");
      expect((await doctorOn(h)).fleet).toEqual([]);
    } finally {
      squatter.close();
    }
  });

  it('etcd out of reach: says where it was looked for and why, and that the queues still run', async () => {
    const f = await hostIn('unreachable', 'f', 'http://127.0.0.1:9');
    const r = await doctorOn(f);
    expect(r.code).toBe(1);
    expect(r.fleet.map((x) => x.reason)).toEqual([
      expect.stringMatching(new RegExp(`^this host \\(f in fleet ${FLEET}\\) does not reach etcd at http://127\\.0\\.0\\.1:9: .+; its queues run`)),
    ]);
  });
});
