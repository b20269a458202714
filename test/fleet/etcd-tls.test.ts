// A fleet on an etcd that serves TLS and requires client certificates (--client-cert-auth): a host with the CA and a client certificate
// joins; one without a client certificate, or verifying etcd with another CA, does not and says why; unreadable files stop rq-mgr at start.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';
import { waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import type { FleetView, MemberState } from '../../src/ipc/fleet-reply.js';
import { type Host, fleetRoot, hostRecords, logLines, recordWhere, startHost, stopFleet } from './fleet-harness.js';

let certs: TestCerts;
let etcd: EtcdProc;
let store: EtcdStore;
const hosts: Host[] = [];

async function host(name: string, fields: Record<string, unknown>): Promise<Host> {
  const h = await startHost(name, { urls: [etcd.url], fields });
  hosts.push(h);
  return h;
}

/** The host's membership once it has tried etcd and failed. */
function notJoined(h: Host): Promise<MemberState> {
  return waitFor(async () => {
    const r = await h.mgr.cmd('fleet');
    const m = (r[1] as FleetView).member;
    return m.state === 'unreachable' ? m : null;
  }, `${h.name} to fail to join`);
}

/** The warn line rq-mgr logs when it cannot reach etcd, with etcd's (or TLS's) reason. */
async function warned(h: Host, reason: RegExp): Promise<void> {
  const line = await waitFor(() => logLines(h, 'fleet: etcd does not answer')[0], `${h.name} to say why at warn`);
  const rec = JSON.parse(line) as { level: number; err: string };
  expect(rec.level).toBe(40);
  expect(rec.err).toMatch(reason);
}

describe('a fleet on an etcd with TLS and client certificates', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    certs = makeTestCerts();
    etcd = await EtcdProc.start({ tls: { cert: certs.serverCert, key: certs.serverKey, clientCa: certs.ca } });
    const read = (f: string) => fs.readFileSync(f);
    store = await EtcdStore.open({
      endpoints: [etcd.url],
      credentials: { tls: { ca: read(certs.ca), cert: read(certs.clientCert), key: read(certs.clientKey) } },
    });
  }, 60_000);

  afterAll(() => stopFleet(hosts, store, etcd, certs), 60_000);

  it('a host with the CA and a client certificate joins: its key is in etcd and /fleet.json lists it up', async () => {
    const a = await host('a', { etcd_ca: certs.ca, etcd_cert: certs.clientCert, etcd_key: certs.clientKey });
    await recordWhere(store, 'a', (r) => r.queues.q1?.status === 'UP', 'q1 UP');
    const view = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${a.root.port}/fleet.json`);
      const v = (await res.json()) as FleetView;
      return v.hosts.some((x) => x.host === 'a' && x.state === 'up') ? v : null;
    }, "a's /fleet.json to list it");
    expect(view).toMatchObject({ member: { state: 'member' }, etcd: { endpoints: [etcd.url], reachable: true } });
  });

  it('a host without a client certificate is turned away by etcd: not a member, and says why', async () => {
    const b = await host('b', { etcd_ca: certs.ca });
    // etcd ends the TLS handshake of a client that shows no certificate.
    const reason = /bad certificate|certificate required/;
    expect((await notJoined(b)).reason).toMatch(reason);
    await warned(b, reason);
    const out = (await run(BIN('rq'), ['fleet', '--root', b.root.root])).stdout;
    expect(out.split('\n')[0]).toMatch(
      /^fleet test: this host is b \(unreachable: etcd did not answer \(https:\/\/127\.0\.0\.1:\d+\): .*(bad certificate|certificate required)/,
    );
    expect(Object.keys(await hostRecords(store))).toEqual(['a']);
  });

  it('a host verifying etcd with another CA does not trust it: not a member, and says why', async () => {
    const c = await host('c', { etcd_ca: certs.otherCa, etcd_cert: certs.clientCert, etcd_key: certs.clientKey });
    const reason = /unable to verify/;
    expect((await notJoined(c)).reason).toMatch(reason);
    await warned(c, reason);
    // rq doctor gives the TLS fields' fix, not etcd's address (exit 1: a problem found).
    const said = (await run(BIN('rq'), ['doctor', '--json', '--root', c.root.root]).catch((err: { stdout: string }) => err)).stdout;
    const fleet = (JSON.parse(said) as { findings: { subject: string; reason: string; fix: string }[] }).findings.filter((f) => f.subject === 'fleet');
    expect(fleet).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/^this host \(c in fleet \S+\) is turned away by etcd at https:\/\/127\.0\.0\.1:\d+: .*unable to verify/),
        fix: expect.stringMatching(/^correct "etcd_ca" \(the CA that signed etcd's certificate\), or "etcd_cert" and "etcd_key"/),
      }),
    ]);
    expect(Object.keys(await hostRecords(store))).toEqual(['a']);
  });

  it('rq-mgr does not start when a file the fleet names cannot be read, or holds no key, naming the field', async () => {
    const key = path.join(certs.dir, 'absent-key.pem');
    const root = await fleetRoot('d', { urls: [etcd.url], fields: { etcd_ca: certs.ca, etcd_cert: certs.clientCert, etcd_key: key } });
    try {
      // An rq-mgr that did start is stopped by the timeout, and fails the test.
      const mgr = () =>
        run(BIN('rq-mgr'), ['run', '--root', root.root], { timeout: 20_000 }).then(
          () => null,
          (err: { code: number; stderr: string }) => err,
        );
      const fail = (await mgr())!;
      expect(fail.code).toBe(1);
      expect(fail.stderr).toContain(`fleet.etcd_key: ${JSON.stringify(key)} cannot be read: no such file`);
      // A file that is there but holds the certificate, not its key.
      fs.copyFileSync(certs.clientCert, key);
      const again = (await mgr())!;
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`fleet.etcd_key: ${JSON.stringify(key)} holds no PEM private key`);
    } finally {
      await root.cleanup();
    }
  });
});
