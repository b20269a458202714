// The etcd client's leases against a real etcd: a grant etcd does not answer is refused to its caller and is not also said as a lease lost.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';

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
