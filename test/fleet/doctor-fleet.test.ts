// rq doctor on fleet hosts, against a real etcd and real hosts: a name held by another rq, etcd out of reach, and an advertise URL that leads elsewhere are problems; a sound host has none.
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

/** A host started beside `a`, once its rq-mgr says it is in `state` in the fleet. */
async function hostIn(state: string, name: string, e: HostEtcd): Promise<Host> {
  const root = await fleetRoot(name, e);
  const h = { name, root, mgr: await MgrProc.start(root.root) };
  others.push(h);
  const mgr = new MgrClient(rootPaths(root.root).mgrSock);
  await waitFor(async () => {
    const v = await mgr.fleet();
    return v.ok && v.value.member.state === state;
  }, `${name} ${state}`);
  return h;
}

/** What `rq doctor --json` lists of the fleet on `h`, and its exit. */
async function fleetFindings(h: Host): Promise<{ code: number; findings: Finding[] }> {
  const r = await runRq(['doctor', '--json'], { root: h.root.root });
  const report = JSON.parse(r.out[0]) as { findings: Finding[] };
  return { code: r.code, findings: report.findings.filter((f) => f.subject === 'fleet') };
}

describe('rq doctor in a fleet', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    a = await startHost('a', etcd.url);
    await webUp(a);
  }, 60_000);
  afterAll(() => stopFleet([a, ...others], undefined, etcd), 60_000);

  it('a member whose advertise URL leads back to it: no fleet finding', async () => {
    expect(await fleetFindings(a)).toEqual({ code: 0, findings: [] });
  });

  it("a second rq under a's name: refused, said with the holder and the fix", async () => {
    const dup = await hostIn('refused', 'a', etcd.url);
    const r = await fleetFindings(dup);
    expect(r.code).toBe(1);
    expect(r.findings).toEqual([
      {
        severity: 'problem',
        subject: 'fleet',
        reason: expect.stringMatching(new RegExp(`^this host \\(a in fleet ${FLEET}\\) is refused: .*http://127\\.0\\.0\\.1:${a.root.port}`)),
        fix: expect.stringContaining('give this host a name no other rq of the fleet uses'),
      },
    ]);
  });

  it("advertised at another host's web: says which rq answers there", async () => {
    const c = await hostIn('member', 'c', { urls: [etcd.url], fields: { advertise: `http://127.0.0.1:${a.root.port}/` } });
    const r = await fleetFindings(c);
    expect(r.code).toBe(1);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0].reason).toBe(
      `this host (c in fleet ${FLEET}) is advertised at http://127.0.0.1:${a.root.port}, which reaches another rq (a in fleet ${FLEET}): ` +
        'the other hosts cannot deliver pool messages to it nor ask it of dependencies',
    );
    expect(r.findings[0].fix).toContain('set "advertise" in the fleet block of');
  });

  it('advertised where nothing listens: says the connection was refused', async () => {
    const port = await freePort();
    const d = await hostIn('member', 'd', { urls: [etcd.url], fields: { advertise: `http://127.0.0.1:${port}/` } });
    const r = await fleetFindings(d);
    expect(r.findings.map((f) => f.reason)).toEqual([
      expect.stringContaining(`is advertised at http://127.0.0.1:${port}, which does not reach this host's web (ECONNREFUSED)`),
    ]);
  });

  it('etcd out of reach: says where it was looked for and why, and that the queues still run', async () => {
    const e = await hostIn('unreachable', 'e', 'http://127.0.0.1:9');
    const r = await fleetFindings(e);
    expect(r.code).toBe(1);
    expect(r.findings.map((f) => f.reason)).toEqual([
      expect.stringMatching(/^this host \(e in fleet test\) does not reach etcd at http:\/\/127\.0\.0\.1:9: .+; its queues run/),
    ]);
  });
});
