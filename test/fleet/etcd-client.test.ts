// The etcd client against a real etcd: a grant etcd does not answer is refused to its caller and is not also said as a lease lost; a
// keep-alive that a hung etcd leaves unanswered is said failing the failover time after it was due, not a whole TTL on; a watch's cancel
// does not wait on a hung etcd; a connection that goes silent is given up, and calls and the watch go on over a new one, on another member
// when that one stays silent.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { enableEtcdAuth } from '../helpers/etcd-auth.js';
import { SilentProxy } from '../helpers/silent-proxy.js';
import { waitFor } from '../helpers/rq-root.js';
import { budget } from '../helpers/time-budget.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';

/** etcd3's own switch for its tests: each call goes to the hosts last-listed first instead of in a random order. */
const pool = createRequire(import.meta.url)('etcd3/lib/connection-pool.js') as { ConnectionPool: { deterministicOrder: boolean } };

/** A watch of `prefix` whose puts' values go into `seen`. */
const watchValues = (store: EtcdStore, prefix: string, seen: string[]) =>
  store.watchPrefix(prefix, { put: (kv) => seen.push(kv.value), delete: () => undefined, connected: () => undefined, disconnected: () => undefined });

let etcd: EtcdProc;
let store: EtcdStore;
beforeAll(async () => {
  etcd = await EtcdProc.start();
  store = await EtcdStore.open({ endpoints: [etcd.url] });
}, 60_000);
afterAll(async () => {
  store?.close();
  await etcd?.cleanup();
});

it('a grant while etcd is down rejects, and says no lease lost: only a lease once granted can be lost', async () => {
  await etcd.stop();
  const said: string[] = [];
  const events = { failing: () => said.push('failing'), alive: () => undefined, lost: (why: string) => said.push(`lost ${why}`) };
  await expect(store.grant(2, events)).rejects.toThrow(/ECONNREFUSED/);
  await etcd.run();
  // etcd3's breaker may skip the member for a while after the failure: tried until granted, each failure again said to no one.
  const lease = await waitFor(() => store.grant(2, events), 'a grant once etcd is back');
  await lease.revoke();
  expect(said).toEqual([]);
});

it('a keep-alive a frozen etcd leaves unanswered is said failing the failover time after its due time, and the lease lives on once it answers', async () => {
  const failoverMs = 300;
  const ttlS = 4;
  const quick = await EtcdStore.open({ endpoints: [etcd.url], failoverMs });
  const said: { what: string; at: number }[] = [];
  const say = (what: string) => said.push({ what, at: Date.now() });
  const lease = await quick.grant(ttlS, { failing: (why) => say(`failing ${why}`), alive: () => say('alive'), lost: (why) => say(`lost ${why}`) });
  try {
    await waitFor(() => said.some((s) => s.what === 'alive'), 'a first keep-alive answered');
    const frozenAt = Date.now();
    await etcd.freeze(true);
    const failing = await waitFor(() => said.find((s) => s.what.startsWith('failing')), 'the hang to be said', 10_000);
    expect(failing.what).toBe('failing a keep-alive was not answered');
    // Due a third of the TTL after the last answer, said the failover time later; etcd3 alone would wait out the whole TTL.
    expect(failing.at - frozenAt).toBeLessThan(budget((ttlS * 1000) / 3 + failoverMs + 1000));
    await etcd.freeze(false);
    await waitFor(() => said.slice(said.indexOf(failing)).some((s) => s.what === 'alive'), 'a keep-alive answered after the thaw');
    expect(said.filter((s) => s.what.startsWith('lost'))).toEqual([]);
  } finally {
    await etcd.freeze(false);
    await lease.revoke();
    quick.close();
  }
});

it("a watch cancelled while etcd hangs gives up within a call's bound: rq-mgr's stop is not held", { timeout: 10_000 }, async () => {
  const quick = await EtcdStore.open({ endpoints: [etcd.url], callTimeoutMs: 500 });
  const w = await watchValues(quick, '/rq/fleet/', []);
  await etcd.freeze(true);
  try {
    await expect(w.cancel()).rejects.toThrow(/no answer in 1000 ms/);
  } finally {
    await etcd.freeze(false);
    quick.close();
  }
});

it(
  'a connection that goes silent is given up after unanswered pings: with etcd users, calls and the watch go on over a new one',
  { timeout: 60_000 },
  async () => {
    const e = await EtcdProc.start();
    let proxy: SilentProxy | null = null;
    let far: EtcdStore | null = null;
    let near: EtcdStore | null = null;
    try {
      await enableEtcdAuth(e.url, null, 'rq', 'rq-secret', 'root-secret');
      proxy = await SilentProxy.start(e.clientPort);
      const credentials = { auth: { user: 'rq', password: 'rq-secret' } };
      const f = (far = await EtcdStore.open({ endpoints: [proxy.url], credentials }));
      const n = (near = await EtcdStore.open({ endpoints: [e.url], credentials }));
      const seen: string[] = [];
      await watchValues(f, '/rq/fleet/w/', seen);
      await f.put('/rq/fleet/x', 'before');
      proxy.goSilent();
      proxy.heal();
      // etcd3 alone keeps the silent connection for good (no pings): no call through it and no watch event would come again.
      let tries = 0;
      await waitFor(
        async () => (await n.put('/rq/fleet/w/k', `after ${++tries}`), seen.some((v) => v.startsWith('after'))),
        'the watch to see a put again',
        40_000,
      );
      await waitFor(() => f.put('/rq/fleet/x', 'after').then(() => true), 'a call to go through again', 20_000);
    } finally {
      far?.close();
      near?.close();
      await proxy?.close();
      await e.cleanup();
    }
  },
);

it('a watch resumed on a member that stays silent is made anew on one that answers', { timeout: 90_000 }, async () => {
  // Two paths to one etcd, as two members: the second goes silent for good.
  const proxy = await SilentProxy.start(etcd.clientPort);
  const store = await EtcdStore.open({ endpoints: [etcd.url, proxy.url], failoverMs: 1000 });
  const near = await EtcdStore.open({ endpoints: [etcd.url] });
  try {
    const seen: string[] = [];
    pool.ConnectionPool.deterministicOrder = true;
    await watchValues(store, '/rq/fleet/s/', seen);
    await near.put('/rq/fleet/s/k', 'before');
    await waitFor(() => seen.includes('before'), 'the watch, on the silent path, to see a put before');
    proxy.goSilent();
    // Once the pings give its connection up, etcd3 resumes the watch on the same path, and waits there; then members are chosen afresh.
    await waitFor(() => proxy.heldWhileSilent > 0, 'the watch to be resumed on the silent path', 30_000);
    pool.ConnectionPool.deterministicOrder = false;
    let n = 0;
    await waitFor(
      async () => (await near.put('/rq/fleet/s/k', `after ${++n}`), seen.some((v) => v.startsWith('after'))),
      'the watch to see a put again',
      45_000,
      250,
    );
  } finally {
    pool.ConnectionPool.deterministicOrder = false;
    store.close();
    near.close();
    await proxy.close();
  }
});
