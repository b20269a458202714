// A lease's keep-alives against a real three-member etcd: the member holding etcd3's keep-alive stream hangs while the others answer, and
// the lease is renewed through them (keep-alives of their own) past its TTL, its key kept, nothing said lost.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EtcdCluster } from '../helpers/etcd.js';
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
    expect(said.filter((s) => s.startsWith('lost'))).toEqual([]);
    expect((await others.getPrefix('/rq/fleet/hosts/me')).map((kv) => kv.value)).toEqual(['here']);
    await lease.revoke();
  } finally {
    await hung.freeze(false);
    store.close();
    others.close();
  }
});
