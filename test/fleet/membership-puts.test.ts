// Membership in-process against a real etcd: a burst of queue changes is one put of the last record, puts keep their gap, a name held by
// another instance is refused and said once per holder until it is free, a clean stop leaves at once, and a host whose etcd stopped
// says it once, then, its lease kept, is a member again and puts what changed meanwhile once etcd is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { type EtcdStore, EtcdStore as Store, type KeyValue } from '../../src/fleet/etcd-client.js';
import type { HostRecord } from '../../src/ipc/fleet-reply.js';
import { Membership } from '../../src/fleet/membership.js';
import { FLEET, KEYS } from './fleet-harness.js';
import { capturedLog } from '../helpers/captured-log.js';

const GAP_MS = 400;
let etcd: EtcdProc;
let store: EtcdStore;

beforeAll(async () => {
  etcd = await EtcdProc.start();
  store = await Store.open({ endpoints: [etcd.url] });
}, 60_000);
afterAll(async () => {
  store?.close();
  await etcd?.cleanup();
});

/** A host's record whose queue figure `ready` the test sets, and a log whose lines it reads. */
function host(name: string, instance: string, over: { store?: EtcdStore; ttlS?: number } = {}) {
  const { log, lines } = capturedLog();
  const h = { ready: 0, lines, m: null as unknown as Membership };
  const record = (): HostRecord => ({
    host: name,
    url: `http://127.0.0.1:1/${name}`,
    version: 'test',
    started_at: '2026-12-05T00:00:00.000Z',
    instance,
    queues: { q: { status: 'UP', ready: h.ready, running: 0, workers: 1 } },
  });
  const settings = { name: FLEET, etcd: [etcd.url], host: name, advertise: `http://127.0.0.1:1/${name}`, leaseTtlS: over.ttlS ?? 5 };
  h.m = new Membership({ store: over.store ?? store, settings, keys: KEYS, record, log, putGapMs: GAP_MS });
  return h;
}

/** Every put of `key` from now on, with when it was seen. */
async function puts(key: string) {
  const seen: { ready: number; at: number }[] = [];
  const w = await store.watchPrefix(key, {
    put: (kv: KeyValue) => kv.key === key && seen.push({ ready: (JSON.parse(kv.value) as HostRecord).queues.q.ready, at: performance.now() }),
    delete: () => undefined,
    connected: () => undefined,
    disconnected: () => undefined,
  });
  return { seen, cancel: w.cancel };
}

const joined = (h: { m: Membership }) => waitFor(() => h.m.state().state === 'member', 'the host to join');

describe('Membership', { timeout: 30_000 }, () => {
  it('puts a burst of changes once, with the last figures, and keeps the put gap between puts', async () => {
    const h = host('burst', 'i-burst');
    h.m.start();
    await joined(h);
    const p = await puts(KEYS.host('burst'));
    try {
      for (let i = 1; i <= 5; i++) {
        h.ready = i;
        h.m.changed();
      }
      await waitFor(() => p.seen.some((s) => s.ready === 5), 'the last figures put');
      h.ready = 6;
      h.m.changed();
      await waitFor(() => p.seen.some((s) => s.ready === 6), 'the next change put');
      // One put for the burst, one for the change after it, that one a put gap after the first (never sooner).
      expect(p.seen.map((s) => s.ready)).toEqual([5, 6]);
      expect(p.seen[1].at - p.seen[0].at).toBeGreaterThanOrEqual(GAP_MS - 20);
      // An unchanged record is not put again.
      h.m.changed();
      h.ready = 7;
      h.m.changed();
      await waitFor(() => p.seen.some((s) => s.ready === 7), 'a change after an unchanged one');
      expect(p.seen.map((s) => s.ready)).toEqual([5, 6, 7]);
    } finally {
      await p.cancel();
      await h.m.stop();
    }
  });

  it('a clean stop records left_at and removes the key at once', async () => {
    const h = host('stops', 'i-stops');
    h.m.start();
    await joined(h);
    h.ready = 1;
    h.m.changed();
    await h.m.stop();
    expect(h.m.state().state).toBe('left');
    expect(await store.getPrefix(KEYS.host('stops'))).toEqual([]);
    const seen = JSON.parse((await store.getPrefix(KEYS.seenHost('stops')))[0].value) as { left_at?: string; joined_at: string };
    expect(seen.left_at).toEqual(expect.any(String));
    expect(seen.joined_at).not.toBe('');
    // A change after the stop neither puts nor rejoins.
    h.m.changed();
    expect(h.m.state().state).toBe('left');
  });

  it('refuses a name another instance holds, says it once for that holder, and joins again once the name is free', async () => {
    const holder = host('taken', 'i-first');
    holder.m.start();
    await joined(holder);
    // The store the second host uses, counting its claims: each retry is one.
    let claims = 0;
    const counting = Object.create(store, {
      createOrGet: { value: (...a: Parameters<EtcdStore['createOrGet']>) => (claims++, store.createOrGet(...a)) },
    }) as EtcdStore;
    const second = host('taken', 'i-second', { store: counting });
    second.m.start();
    await waitFor(() => claims >= 3, 'three claims of the name');
    expect(second.m.state()).toMatchObject({ state: 'refused', reason: expect.stringContaining('the host name taken is held by another rq') });
    expect(second.lines.filter((l) => l.level === 50).length).toBe(1);
    await holder.m.stop();
    await joined(second);
    expect(second.lines.filter((l) => l.msg === 'fleet: joined again')).toHaveLength(1);
    await second.m.stop();
  });

  it('when etcd stops, is unreachable (said once), then keeps its lease and puts what changed meanwhile once etcd is back', { timeout: 60_000 }, async () => {
    // A short failover time: the outage is said within seconds.
    const quick = await Store.open({ endpoints: [etcd.url], failoverMs: 300 });
    const h = host('blip', 'i-blip', { store: quick, ttlS: 10 });
    h.m.start();
    await joined(h);
    const p = await puts(KEYS.host('blip'));
    const leaseOf = async () => (await store.getPrefix(KEYS.host('blip')))[0]?.lease;
    const lease = await leaseOf();
    try {
      await etcd.stop();
      try {
        await waitFor(() => h.m.state().state === 'unreachable', 'the keep-alive to fail past the failover time', 20_000);
        h.ready = 9;
        h.m.changed();
      } finally {
        await etcd.run();
      }
      await joined(h);
      await waitFor(() => p.seen.some((x) => x.ready === 9), 'the record put again');
      // The lease held through the outage: a keep-alive answered again brought the host back, not a rejoin with a new lease.
      expect(await leaseOf()).toBe(lease);
      expect(h.lines.filter((l) => l.msg === 'fleet: joined again')).toHaveLength(1);
      expect(h.lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([expect.stringContaining('fleet: etcd does not answer')]);
    } finally {
      await p.cancel();
      await h.m.stop();
      quick.close();
    }
  });
});
