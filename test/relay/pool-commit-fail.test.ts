// A pool host that fails the commit (a 500, or a connection cut) keeps the message: a copy there may have been committed, so no other host
// is tried, in that run or later; a host that fails the prep, before any commit, is left for another in the same run.
import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdProc } from '../helpers/etcd.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { KEYS } from '../fleet/fleet-harness.js';
import { Host, RECORD_SH } from './hosts.js';
import { POOL, fleetConfig, poolMessages, poolSeen } from './pool-hosts.js';

// Soft-fail back-off count²·10 s scaled down (docs/relay.md), inherited by every rq-mgr.
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

let etcd: EtcdProc;
let store: EtcdStore;
let sender: Host;
let live: Host;
let far: http.Server;
/** How the stand-in pool host x answers: the prep is taken and the commit fails, or the prep fails. */
let mode: 'commit 500' | 'commit cut' | 'prep 500' = 'commit 500';
let seq = 1;

/**
 * Host x, registered in etcd as a pool host with the most free workers (so it is chosen first), is a plain HTTP server
 * answering the relay's calls as `mode` says: what no rq host can be made to do on cue.
 */
function farHost(): http.Server {
  return http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const port = (far.address() as net.AddressInfo).port;
      if (req.method === 'POST' && req.url === `/q/${POOL}/new_message`) {
        if (mode === 'prep 500') return res.writeHead(500).end('prep refused');
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(['ok', `http://127.0.0.1:${port}/q/${POOL}/20261121.1643.46.613.${seq++}`]));
      }
      // The relay asks a copy's state before it resends: still in prep, as an unanswered commit may leave it.
      if (req.url?.endsWith('/state.json')) return res.writeHead(200, { 'content-type': 'application/json' }).end('["prep"]');
      if (body.includes('_method=commit')) return mode === 'commit cut' ? req.socket.destroy() : res.writeHead(500).end('commit failed');
      res.writeHead(404).end('no such route');
    });
  });
}

beforeAll(async () => {
  etcd = await EtcdProc.start();
  store = await EtcdStore.open({ endpoints: [etcd.url] });
  far = farHost();
  await new Promise<void>((resolve) => far.listen(0, '127.0.0.1', resolve));
  [sender, live] = await Promise.all([
    Host.start({ config: fleetConfig('s', etcd.url) }),
    Host.start({ config: fleetConfig('y', etcd.url), queues: { [POOL]: { script: RECORD_SH, num_workers: 1 } } }),
  ]);
  const record = {
    host: 'x',
    url: `http://127.0.0.1:${(far.address() as net.AddressInfo).port}`,
    version: '3.0.0',
    started_at: new Date().toISOString(),
    instance: 'stand-in',
    queues: { [POOL]: { status: 'UP', ready: 0, running: 0, workers: 100 } },
  };
  await store.put(KEYS.host('x'), JSON.stringify(record));
  await poolSeen(sender, { x: 'UP', y: 'UP' }, 'x and y take the pool');
}, 90_000);

afterAll(async () => {
  await Promise.all([sender?.stop(), live?.stop()]);
  store?.close();
  await etcd?.cleanup();
  far?.close();
}, 60_000);

/** Every message of the pool queue on y, in any state. */
const onY = async () => (await Promise.all(['que', 'run', 'done'].map((s) => poolMessages(live, s)))).flat();

describe('a pool host that fails', { timeout: 60_000 }, () => {
  it.each(['commit 500', 'commit cut'] as const)('%s: the message stays with it across resends, and y never gets it', async (m) => {
    mode = m;
    const token = m.replace(' ', '-');
    const id = await sender.send('relay', { dest: `fleet:${POOL}`, param1: token });
    await waitFor(
      async () => {
        const msg = (await sender.q('relay', 'get_message', { msg_id: id }))[1];
        return Number(msg.count) >= 2 && msg.state === 'que';
      },
      'two resends',
      30_000,
      100,
    );
    const log = await sender.stdio('relay', id);
    expect(log).not.toContain('failed before any commit');
    expect(log).not.toContain('chose y');
    expect((await onY()).some((d) => d.token === token)).toBe(false);
    // Its back-off is short: it may be running again; it is deleted once it waits in the que.
    await waitFor(async () => (await sender.q('relay', 'delete_message', { msg_id: id }))[0] === 'ok', 'deleted while waiting', 30_000, 50);
  });

  it('prep 500: y gets it in the same run, without a resend', async () => {
    mode = 'prep 500';
    const id = await sender.send('relay', { dest: `fleet:${POOL}`, param1: 'prep-500' });
    const m = await sender.waitState('relay', id, ['relayed']);
    expect(Number(m.count ?? 0)).toBe(0);
    expect(await sender.stdio('relay', id)).toMatch(/pool: x failed before any commit went there \(.*500.*\); trying another host now/);
    await waitFor(async () => (await onY()).some((d) => d.token === 'prep-500'), 'the message on y');
  });
});
