// Fleet hosts behind basic_auth: the fleet's secret is made once in etcd, each host's web lets the others in by it (user rq-fleet),
// and pools and dependencies across hosts work while every other request still needs the host's own users.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { Host, RECORD_SH } from '../relay/hosts.js';
import { POOL, fleetConfig, poolMessages, poolSeen, sendWithAttachment } from '../relay/pool-hosts.js';
import { fillRoute, routeTable } from '../web/route-table.js';
import { KEYS } from './fleet-harness.js';

/** What the host's rq-mgr logged so far. */
const fsLog = (h: Host) => fs.readFileSync(path.join(h.root, 'log', 'mgr-test.log'), 'utf8');

let etcd: EtcdProc;
let store: EtcdStore;
let a: Host;
let b: Host;
let secret: string;

const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
/** Each host has a user of its own (b one named as the fleet's user, too); /healthz stays open for the harness. */
const authConfig = (...users: string[]) => ({ basic_auth: { users: Object.fromEntries(users.map((u) => [u, `pw-${u}`])) }, metrics_public: true });
/** The calls a peer may make, as b's routes: left out of the sweep of refusals (`GET /rq/q/:q` is swept: it serves the page too). */
const PEER_CALLS = new Set([
  ...['new_message', ':id/attach/new', ':id/dependents', ':id/resolved'].map((r) => `POST /rq/q/:q/${r}`),
  'GET /rq/q/:q/:id/state.json',
  'GET /rq/fleet.json',
]);

describe('a fleet whose hosts use basic_auth', { timeout: 90_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
    [a, b] = await Promise.all([
      Host.start({ config: fleetConfig('a', etcd.url, authConfig('alice')), queues: { local: { script: RECORD_SH } } }),
      // b under a relative_root: what rq-fleet may ask is judged by the route, whatever the prefix.
      Host.start({
        config: (port) => {
          const c = fleetConfig('b', etcd.url, authConfig('bob', 'rq-fleet'))(port);
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
    const asked = async (method: string, url: string, headers: Record<string, string> = fleetUser, body?: BodyInit) => {
      const res = await fetch(url, {
        method,
        headers,
        redirect: 'manual',
        body: body ?? (method === 'POST' ? new URLSearchParams({ x_format: 'json' }) : undefined),
      });
      return { status: res.status, body: await res.text() };
    };
    expect((await asked('GET', `${b.base}/q/${POOL}/${parked}/state.json`)).status).toBe(200);
    expect((await asked('GET', `${b.base}/q/${POOL}.json`)).status).toBe(200);
    // The fleet's view, by which rq doctor on a host checks that its advertise URL leads back to it.
    expect((await asked('GET', `${b.base}/fleet.json`)).status).toBe(200);
    // Every other route of b's web, the queue's page and the bare message route without a commit included: 403.
    const values = { q: POOL, id: parked, name: 'a.txt', file: 'stdio.log', tag: 'x' };
    // /healthz and /metrics are open to anyone here (metrics_public).
    const others = (await routeTable(b.root)).filter((r) => !PEER_CALLS.has(`${r.method} ${r.pattern}`) && !['/rq/healthz', '/rq/metrics'].includes(r.pattern));
    expect(others.length).toBeGreaterThan(55);
    const answers: string[] = [];
    for (const r of others) answers.push(`${r.method} ${r.pattern} ${(await asked(r.method, new URL(b.base).origin + fillRoute(r.pattern, values))).status}`);
    expect(answers).toEqual(others.map((r) => `${r.method} ${r.pattern} 403`));
    const form = (fields: Record<string, string>) => new URLSearchParams({ x_format: 'json', ...fields });
    const multipart = new FormData();
    multipart.append('_method', 'delete');
    for (const [query, body] of [
      ['', form({ _method: 'destroy' })],
      // Read as the route reads it: the body's _method over the query's.
      ['?_method=commit', form({ _method: 'delete' })],
      // A multipart body is read by the route alone: the query's commit cannot vouch for it.
      ['?_method=commit&x_format=json', multipart],
    ] as const) {
      const r = await asked('POST', `${b.base}/q/${POOL}/${parked}${query}`, { ...fleetUser, accept: 'application/json' }, body);
      expect(r.status).toBe(403);
      // In the format the client asked for (as the hosts do, by Accept), the refused call early, so a relay's log line shows it.
      expect(JSON.parse(r.body)).toEqual([
        'fail',
        `user rq-fleet: expected a call between hosts of a fleet (docs/fleet.md), received "POST /rq/q/${POOL}/${parked}${query}"`,
      ]);
    }
    expect(await b.state(POOL, parked)).toBe('que');
    expect(await (await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('bob', 'pw-bob') })).json()).toMatchObject({ status: 'UP' });
    // Said on b at warn once a minute, the first refused call named: a secret misused, or hosts of two versions.
    await waitFor(() => /rq-fleet refused/.test(fsLog(b)), "b's log to say it");
    expect(fsLog(b).match(/"call":"[^"]*","ip":"[^"]*","msg":"rq-fleet refused[^"]*"/g)).toEqual([
      `"call":"${others[0].method} ${fillRoute(others[0].pattern, values)}","ip":"127.0.0.1","msg":"rq-fleet refused: not a call between hosts of a fleet"`,
    ]);
    // b's own users are not held to it, one of its own named rq-fleet included: the request let in by the fleet's secret is.
    const own = await asked('POST', `${b.base}/q/${POOL}/${parked}`, basic('rq-fleet', 'pw-rq-fleet'), form({ _method: 'delete' }));
    expect(own).toEqual({ status: 200, body: expect.stringContaining('ok') });
    expect(await b.state(POOL, parked)).toMatch(/^missing/);
  });

  it("a peer's multipart call refused as no commit is answered in its URL's format, not in the one a field of its unread body asks for", async () => {
    const parked = await b.send(POOL, { dest: POOL, param1: 'parked', due: Math.floor(Date.now() / 1000) + 3600 });
    // The route alone reads a multipart body: the refusal, made before it, reads none of it, not even its x_format.
    const body = new FormData();
    body.append('x_format', 'json');
    body.append('_method', 'commit');
    const call = `/q/${POOL}/${parked}?_method=commit`;
    const res = await fetch(`${b.base}${call}`, { method: 'POST', headers: basic('rq-fleet', secret), body });
    expect([res.status, res.headers.get('content-type'), await res.text()]).toEqual([
      403,
      'text/plain; charset=utf-8',
      `403 - user rq-fleet: expected a call between hosts of a fleet (docs/fleet.md), received "POST /rq${call}"`,
    ]);
    expect(await b.state(POOL, parked)).toBe('que');
  });

  it('a pool message and its attachment go to the other host through its basic_auth', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-fleet-secret-'));
    try {
      const { id, md5 } = await sendWithAttachment(a, dir, 'through-auth');
      const relayed = await a.waitState('relay', id, ['relayed', 'err'], 30_000);
      expect(relayed.state).toBe('relayed');
      const far = String(relayed.status).match(/\/q\/work\/(\S+)/)?.[1] ?? '';
      expect((await b.waitState(POOL, far.split('/').pop()!, ['done', 'err'])).state).toBe('done');
      expect((await poolMessages(b, 'done')).find((m) => m.token === 'through-auth')?.md5s).toEqual([md5]);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
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
    // b's web asks rq-mgr again once what it holds is a second old: the old secret is shut out though nobody sent the new one.
    await waitFor(
      async () => (await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('rq-fleet', secret) })).status === 401,
      "b's web to refuse the old one",
    );
    expect((await fetch(`${b.base}/q/${POOL}.json`, { headers: basic('rq-fleet', changed) })).status).toBe(200);
    // a's queue still holds the old secret from its calls to b above: the 401 has it ask rq-mgr again, and the create goes through.
    const parent = await b.send(POOL, { dest: POOL, param1: 'parent-after-change', due: Math.floor(Date.now() / 1000) + 3600 });
    const child = await a.q('local', 'create_message', { dest: 'local', param1: 'child-after-change', depends: [b.fullId(POOL, parent)] });
    expect(child).toEqual(['ok', expect.any(String)]);
    const id = await a.send('relay', { dest: `fleet:${POOL}`, param1: 'after-change' });
    expect((await a.waitState('relay', id, ['relayed', 'err'], 30_000)).state).toBe('relayed');
    // A hand-written value of another shape is said and not used: both hosts keep the last good one.
    await store.put(KEYS.secret, 'short');
    await waitFor(() => [a, b].every((h) => /not of the shape rq makes/.test(fsLog(h))), 'both hosts to say the value is refused');
    for (const h of [a, b]) expect(await credential(h)).toBe(changed);
  });
});
