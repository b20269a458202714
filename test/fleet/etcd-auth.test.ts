// A fleet on an etcd with auth enabled (over TLS, server certificate only): a host with the user docs/fleet.md sets up (readwrite on
// /rq/fleet/ only) and its password file joins; one with a wrong password does not, and says why in its log and its fleet status;
// an etcd restart (its auth tokens forgotten) is got over without restarting rq.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { enableEtcdAuth } from '../helpers/etcd-auth.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';
import { waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';
import { type Host, KEYS, hostRecords, logLines, recordWhere, startHost, stopFleet } from './fleet-harness.js';

let certs: TestCerts;
let etcd: EtcdProc;
let store: EtcdStore;
const hosts: Host[] = [];

/** A host whose fleet names the user `rq` and a password file holding `password` (with the line end `echo` leaves). */
async function hostWithPassword(name: string, password: string): Promise<Host> {
  const file = path.join(certs.dir, `${name}-password`);
  fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
  const h = await startHost(name, { urls: [etcd.url], fields: { etcd_ca: certs.ca, etcd_user: 'rq', etcd_password_file: file } });
  hosts.push(h);
  return h;
}

/** A failed wait's error with the host's view as last read and its last fleet log lines. */
const explained = (h: Host, last: () => unknown) => (err: Error) => {
  throw new Error(`${err.message}; its view last: ${JSON.stringify(last())}; its log: ${logLines(h, 'fleet').slice(-8).join(' | ')}`);
};

async function memberOf(h: Host): Promise<FleetView['member']> {
  const r = await h.mgr.cmd('fleet');
  expect(r[0]).toBe('ok');
  return (r[1] as FleetView).member;
}

describe('a fleet on an etcd with users', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    certs = makeTestCerts();
    etcd = await EtcdProc.start({ tls: { cert: certs.serverCert, key: certs.serverKey } });
    await enableEtcdAuth(etcd.url, certs.ca, 'rq', 'rq-secret', 'root-secret');
    store = await EtcdStore.open({
      endpoints: [etcd.url],
      credentials: { tls: { ca: fs.readFileSync(certs.ca) }, auth: { user: 'root', password: 'root-secret' } },
    });
  }, 60_000);

  afterAll(() => stopFleet(hosts, store, etcd, certs), 60_000);

  it('a host with the rq user and its password file joins, and reads the fleet back', async () => {
    const a = await hostWithPassword('a', 'rq-secret');
    await recordWhere(store, 'a', (r) => r.queues.q1?.status === 'UP', 'q1 UP');
    // Generous: a first sign-in (bcrypt at etcd) and the watch's set-up took past 10 s under a full suite's load.
    const v = await waitFor(
      async () => {
        const r = await a.mgr.cmd('fleet');
        const view = r[1] as FleetView;
        // Member once its seen record is put too, which comes after the record the view lists.
        return view.member.state === 'member' && view.hosts.some((h) => h.host === 'a' && h.state === 'up') ? view : null;
      },
      'a to be a member whose own view lists it',
      30_000,
    );
    expect(v.etcd.reachable).toBe(true);
    expect(logLines(a, 'rq-secret')).toEqual([]);
  });

  it('a host with a wrong password does not join, and says why at warn', async () => {
    const b = await hostWithPassword('b', 'not-the-password');
    const refused = /authentication failed, invalid user ID or password/;
    const m = await waitFor(async () => {
      const x = await memberOf(b);
      return x.state === 'unreachable' ? x : null;
    }, 'b to fail to join');
    expect(m.reason).toMatch(refused);
    const line = await waitFor(() => logLines(b, 'fleet: etcd does not answer')[0], 'b to say why at warn');
    expect(JSON.parse(line)).toMatchObject({ level: 40, err: expect.stringMatching(refused) });
    const status = await run(BIN('rq-mgr'), ['status', '--root', b.root.root]);
    expect(status.stdout).toMatch(/fleet test as b: unreachable since \S+ \(etcd did not answer .*authentication failed/);
    // rq doctor tells a refusal from no answer, and gives the user's fix, not etcd's address (exit 1: a problem found).
    const said = (await run(BIN('rq'), ['doctor', '--json', '--root', b.root.root]).catch((err: { stdout: string }) => err)).stdout;
    const doctor = JSON.parse(said) as { findings: { subject: string; reason: string; fix: string }[] };
    expect(doctor.findings.filter((f) => f.subject === 'fleet')).toEqual([
      {
        severity: 'problem',
        subject: 'fleet',
        reason: expect.stringMatching(
          /^this host \(b in fleet \S+\) is turned away by etcd at https:\/\/127\.0\.0\.1:\d+: 3 INVALID_ARGUMENT: etcdserver: authentication failed/,
        ),
        fix: expect.stringMatching(/^correct "etcd_user", or the password in the file "etcd_password_file" names, in the fleet block of /),
      },
    ]);
    expect(Object.keys(await hostRecords(store))).toEqual(['a']);
    expect((await store.getPrefix(KEYS.seen)).map((kv) => kv.key)).toEqual([KEYS.seenHost('a')]);
    expect(logLines(b, 'not-the-password')).toEqual([]);
  });

  it('etcd restarted forgets its auth tokens: the host signs in again, is a member and sees the fleet, without a restart', async () => {
    const a = hosts[0];
    await etcd.stop();
    await etcd.run();
    let last: FleetView | undefined;
    const withLast = explained(a, () => last);
    const v = await waitFor(
      async () => {
        const view = (last = (await a.mgr.cmd('fleet'))[1] as FleetView);
        return view.member.state === 'member' && view.etcd.reachable && view.hosts.some((h) => h.host === 'a' && h.state === 'up') ? view : null;
      },
      'a to be a member that sees the fleet again',
      20_000,
    ).catch(withLast);
    expect(v.hosts.map((h) => h.host)).toContain('a');
    // Its view follows etcd again: a key put now is seen.
    await store.put(
      KEYS.seenHost('z'),
      JSON.stringify({ host: 'z', url: 'http://127.0.0.1:9/', joined_at: new Date().toISOString(), left_at: new Date().toISOString() }),
    );
    await waitFor(async () => (last = (await a.mgr.cmd('fleet'))[1] as FleetView).hosts.some((h) => h.host === 'z'), "a's view to see a new key", 20_000).catch(
      withLast,
    );
    await store.delete(KEYS.seenHost('z'));
  });

  it('a clean stop revokes the lease as the rq user may: the key goes at once, and left_at is written', async () => {
    const a = hosts[0];
    // A member when it stops: under load a 2 s lease can lapse and be taken again, and a host between two leases has none to revoke.
    let last: FleetView['member'] | undefined;
    await waitFor(async () => (last = await memberOf(a)).state === 'member', 'host a to hold its lease', 20_000).catch(explained(a, () => last));
    await a.mgr.stop();
    expect(Object.keys(await hostRecords(store))).toEqual([]);
    const seen = (await store.getPrefix(KEYS.seenHost('a')))[0];
    expect(JSON.parse(seen.value)).toHaveProperty('left_at');
  });
});
