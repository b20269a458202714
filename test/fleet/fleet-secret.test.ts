// Fleet hosts behind basic_auth: the fleet's secret is made once in etcd, each host's web lets the others in by it (user rq-fleet),
// and pools and dependencies across hosts work while every other request still needs the host's own users.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { Host, RECORD_SH } from '../relay/hosts.js';
import { POOL, fleetConfig, poolSeen } from '../relay/pool-hosts.js';
import { KEYS } from './fleet-harness.js';

/** What the host's rq-mgr logged so far. */
const fsLog = (h: Host) => fs.readFileSync(path.join(h.root, 'log', 'mgr-test.log'), 'utf8');

let etcd: EtcdProc;
let store: EtcdStore;
let a: Host;
let b: Host;
let secret: string;

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
/** Each host has a user of its own; /healthz stays open for the harness. */
const authConfig = (user: string) => ({ basic_auth: { users: { [user]: `pw-${user}` } }, metrics_public: true });

describe('a fleet whose hosts use basic_auth', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
    [a, b] = await Promise.all([
      Host.start({ config: fleetConfig('a', etcd.url, authConfig('alice')), queues: { local: { script: RECORD_SH } } }),
      // b under a relative_root: what rq-fleet may ask is judged by the route, whatever the prefix.
      Host.start({
        config: (port) => {
          const c = fleetConfig('b', etcd.url, authConfig('bob'))(port);
          return { ...c, relative_root: '/rq', fleet: { ...(c.fleet as object), advertise: `http://127.0.0.1:${port}/rq/` } };
        },
        queues: { [POOL]: { script: RECORD_SH, num_workers: 2 } },
      }),
    ]);
    await poolSeen(a, { b: 'UP' }, 'b takes the pool');
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    store?.close();
    await etcd?.cleanup();
  }, 60_000);

  it('one secret, made in etcd by the first host to join; rq-mgr gives it to its own daemons only, never in /fleet.json', async () => {
    const kvs = await store.getPrefix(KEYS.secret);
    expect(kvs).toHaveLength(1);
    secret = kvs[0].value;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    for (const h of [a, b]) expect(await h.mgr!.cmd('fleet_credential')).toEqual(['ok', { user: 'rq-fleet', password: secret }]);
    const view = await (await fetch(`${a.base}/fleet.json`, { headers: basic('alice', 'pw-alice') })).text();
    expect(view).toContain('"hosts"');
    expect(view).not.toContain(secret);
  });

  it("a host's web lets in its own users and the fleet's, and nobody else", async () => {
    const status = async (headers: Record<string, string>) => (await fetch(`${b.base}/q/${POOL}.json`, { headers })).status;
    expect(await status(basic('bob', 'pw-bob'))).toBe(200);
    expect(await status(basic('rq-fleet', secret))).toBe(200);
    expect(await status(basic('rq-fleet', `${secret.slice(1)}x`))).toBe(401);
    expect(await status(basic('alice', 'pw-alice'))).toBe(401);
    expect(await status({})).toBe(401);
  });

  it('rq-fleet may make only the calls hosts make to each other; refused, nothing changes', async () => {
    const fleetUser = basic('rq-fleet', secret);
    const parked = await b.send(POOL, { dest: POOL, param1: 'parked', due: Math.floor(Date.now() / 1000) + 3600 });
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { ...fleetUser, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const multipart = (fields: Record<string, string>) => {
      const fd = new FormData();
      for (const [k, v] of Object.entries(fields)) fd.append(k, v);
      return fd;
    };
    const asked = async (url: string, init: RequestInit = { headers: fleetUser }) => {
      const res = await fetch(url, init);
      return { status: res.status, body: await res.text() };
    };
    expect((await asked(`${b.base}/q/${POOL}/${parked}/state.json`)).status).toBe(200);
    for (const [url, init] of [
      [`${b.base}/q.json?x_format=json`, undefined],
      [`${b.base}/q/${POOL}`, undefined],
      [`${b.base}/q/${POOL}/${parked}?x_format=json`, form({ _method: 'destroy' })],
      [`${b.base}/q/${POOL}/${parked}?_method=commit&x_format=json`, form({ _method: 'delete' })],
      [`${b.base}/q/${POOL}/adminoper?x_format=json`, form({ oper: 'pause' })],
      [`${b.base}/q/${POOL}/${parked}/run_now?x_format=json`, form({})],
      // A multipart body is read only by the route: the query's commit cannot vouch for it.
      [`${b.base}/q/${POOL}/${parked}?_method=commit&x_format=json`, { method: 'POST', headers: fleetUser, body: multipart({ _method: 'delete' }) }],
    ] as const) {
      const r = await asked(url, init ?? { headers: fleetUser });
      expect([url, r.status]).toEqual([url, 403]);
      expect(r.body).toContain('user rq-fleet: expected one of the calls hosts of a fleet make to each other');
    }
    // As a JSON client asked: the refusal in its format, naming what was asked.
    expect(JSON.parse((await asked(`${b.base}/q.json?x_format=json`)).body)).toEqual([
      'fail',
      expect.stringContaining('received "GET /rq/q.json?x_format=json"'),
    ]);
    expect(await b.state(POOL, parked)).toBe('que');
    expect(await (await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('bob', 'pw-bob') })).json()).toMatchObject({ status: 'UP' });
    // The host's own user is not held to it.
    const own = await fetch(`${b.base}/q/${POOL}/${parked}`, {
      ...form({ _method: 'delete', x_format: 'json' }),
      headers: { ...basic('bob', 'pw-bob'), 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([own.status, await own.text()]).toEqual([200, expect.stringContaining('ok')]);
    expect(await b.state(POOL, parked)).toMatch(/^missing/);
  });

  it('a pool message goes to the other host through its basic_auth', async () => {
    const id = await a.send('relay', { dest: `fleet:${POOL}`, param1: 'through-auth' });
    const relayed = await a.waitState('relay', id, ['relayed', 'err'], 30_000);
    expect(relayed.state).toBe('relayed');
    const far = String(relayed.status).match(/\/q\/work\/(\S+)/)?.[1] ?? '';
    expect((await b.waitState(POOL, far.split('/').pop()!, ['done', 'err'])).state).toBe('done');
  });

  it('a message on a waits for one on b and is released by it, each host calling the other through its basic_auth', async () => {
    expect(await b.mgr!.cmd('pause_queue', POOL)).toEqual(['ok', expect.anything()]);
    const parent = await b.send(POOL, { dest: POOL, param1: 'parent' });
    const child = await a.send('local', { dest: 'local', param1: 'child', depends: [b.fullId(POOL, parent)] });
    // Registered on b (a's call to b), so b knows whom to tell.
    await waitFor(async () => (await b.q(POOL, 'get_message', { msg_id: parent }))[1].dependents?.[0] === a.fullId('local', child), 'a registered on b');
    expect(await a.state('local', child)).toBe('que');
    expect(await b.mgr!.cmd('resume_queue', POOL)).toEqual(['ok', expect.anything()]);
    // b's call to a releases it.
    const done = await a.waitState('local', child, ['done', 'err'], 30_000);
    expect(done.depends_done).toEqual({ [b.fullId(POOL, parent)]: 'done' });
  });

  it("a secret changed in etcd is taken by every host at once; a value not of rq's shape is not", async () => {
    const credential = async (h: Host) => (await h.mgr!.cmd('fleet_credential'))[1]?.password;
    const changed = 'N'.repeat(43);
    await store.put(KEYS.secret, changed);
    for (const h of [a, b]) await waitFor(async () => (await credential(h)) === changed, 'the host to take the new secret');
    // b's web asks rq-mgr again at its next miss (at most once a second).
    await waitFor(async () => (await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('rq-fleet', changed) })).status === 200, "b's web to take it");
    expect((await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('rq-fleet', secret) })).status).toBe(401);
    const id = await a.send('relay', { dest: `fleet:${POOL}`, param1: 'after-change' });
    expect((await a.waitState('relay', id, ['relayed', 'err'], 30_000)).state).toBe('relayed');
    // A hand-written value of another shape is said and not used: both hosts keep the last good one.
    await store.put(KEYS.secret, 'short');
    await waitFor(() => [a, b].every((h) => /not of the shape rq makes/.test(fsLog(h))), 'both hosts to say the value is refused');
    for (const h of [a, b]) expect(await credential(h)).toBe(changed);
  });
});
