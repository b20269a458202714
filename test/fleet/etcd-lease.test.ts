// A lease's keep-alives against a real three-member etcd: the member holding etcd3's keep-alive stream hangs while the others answer, and
// the lease is renewed through them (keep-alives of their own) past its TTL, its key kept, nothing said failing or lost. Against one real
// etcd: one stopped past the TTL is said failing with its own refusal, then the lease lost, once; a released lease expires on its own.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster, etcdForFile } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';

/** etcd3's own switch for its tests: each call goes to the hosts last-listed first instead of in a random order. */
const pool = createRequire(import.meta.url)('etcd3/lib/connection-pool.js') as { ConnectionPool: { deterministicOrder: boolean } };

let cluster: EtcdCluster;
beforeAll(async () => {
  cluster = await EtcdCluster.start(3);
}, 60_000);
afterAll(async () => {
  pool.ConnectionPool.deterministicOrder = false;
  await cluster?.cleanup();
});

it('the member holding the keep-alive stream hangs: the lease is renewed through the others past its TTL, and its key stays', { timeout: 60_000 }, async () => {
  const ttlS = 3;
  const store = await EtcdStore.open({ endpoints: cluster.urls });
  const others = await EtcdStore.open({ endpoints: cluster.urls.slice(0, 2) });
  const said: string[] = [];
  const hung = cluster.members[2];
  try {
    // etcd3's keep-alive stream on the last-listed member; the renewals then go where they may, as in use.
    pool.ConnectionPool.deterministicOrder = true;
    const lease = await store.grant(ttlS, { failing: () => said.push('failing'), alive: () => said.push('alive'), lost: (why) => said.push(`lost ${why}`) });
    await store.put('/rq/fleet/hosts/me', 'here', lease);
    await waitFor(() => said.includes('alive'), 'a first keep-alive answered');
    pool.ConnectionPool.deterministicOrder = false;
    await hung.freeze(true);
    const from = said.length;
    // Four answers after the hang span more than the TTL (one each third of it).
    await waitFor(
      () => said.slice(from).filter((s) => s === 'alive').length >= 4 || said.some((s) => s.startsWith('lost')),
      'keep-alives answered past the TTL',
      30_000,
    );
    // The renewals' answers count: etcd3's own stream, on the hung member, answers nothing for a whole failover time and more.
    expect(said.filter((s) => s !== 'alive')).toEqual([]);
    expect((await others.getPrefix('/rq/fleet/hosts/me')).map((kv) => kv.value)).toEqual(['here']);
    await lease.revoke();
  } finally {
    await hung.freeze(false);
    store.close();
    others.close();
  }
});

describe('a lease on one etcd', () => {
  const e = etcdForFile({ failoverMs: 300 });

  it('etcd stopped past the TTL: failing is said with its refusal, then the lease lost, once and for good', { timeout: 60_000 }, async () => {
    const said: string[] = [];
    await e.store.grant(2, {
      failing: (why) => said.push(`failing ${why}`),
      alive: () => said.push('alive'),
      lost: (why) => said.push(`lost ${why}`),
    });
    await waitFor(() => said.includes('alive'), 'a first keep-alive answered');
    await e.etcd.stop();
    await waitFor(() => said.some((s) => s.startsWith('lost')), 'the lease said lost', 30_000);
    await e.etcd.run();
    // A new lease answers: the old one had the same chance to say anything more.
    const again = await waitFor(
      () => e.store.grant(2, { failing: () => undefined, alive: () => undefined, lost: () => undefined }),
      'a grant once etcd is back',
    );
    await again.revoke();
    const failing = said.filter((s) => s.startsWith('failing'));
    expect(failing.length).toBeGreaterThan(0);
    expect(failing[0]).toMatch(/ECONNREFUSED|UNAVAILABLE/);
    expect(said.filter((s) => s.startsWith('lost'))).toHaveLength(1);
    // Said as what happened, with the last keep-alive's failure: not etcd3's own "Lease We lost connection to etcd… is expired or revoked".
    expect(said.at(-1)).toMatch(/^lost no keep-alive answered for over 4 s \(.*(ECONNREFUSED|UNAVAILABLE)/);
  });

  it('a released lease is no longer kept alive and expires on its own, its key with it; a revoked one takes its key at once', { timeout: 30_000 }, async () => {
    const events = { failing: () => undefined, alive: () => undefined, lost: () => undefined };
    const released = await e.store.grant(1, events);
    await e.store.put('/rq/test/released', 'x', released);
    released.release();
    await waitFor(async () => (await e.store.getPrefix('/rq/test/released')).length === 0, 'the released lease to expire', 10_000);
    const revoked = await e.store.grant(30, events);
    await e.store.put('/rq/test/revoked', 'x', revoked);
    await revoked.revoke();
    expect(await e.store.getPrefix('/rq/test/revoked')).toEqual([]);
  });
});
