// FleetView on a real etcd: a read that fails after the watch is made is tried again, since the watch alone never brings what was there before it.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { FleetView } from '../../src/fleet/fleet-view.js';
import type { FleetHost } from '../../src/ipc/fleet-reply.js';
import { FLEET, KEYS } from './fleet-harness.js';

let etcd: EtcdProc;
let store: EtcdStore;

describe('FleetView', { timeout: 30_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url], callTimeoutMs: 300 });
  }, 30_000);

  afterAll(async () => {
    store?.close();
    await etcd?.cleanup();
  });

  it('a first read that etcd does not answer is tried again: a host put before the watch is seen', async () => {
    const record = { host: 'x', url: 'http://127.0.0.1:1/', version: '1', started_at: new Date().toISOString(), instance: 'i', queues: {} };
    await store.put(KEYS.host('x'), JSON.stringify(record));
    // The first read of the view is sent to an etcd that is frozen for it, and times out; its watch is already made.
    const reads: string[] = [];
    const flaky = Object.create(store) as EtcdStore;
    flaky.getPrefix = async (prefix) => {
      reads.push(prefix);
      if (reads.length > 1) return store.getPrefix(prefix);
      await etcd.freeze(true);
      try {
        return await store.getPrefix(prefix);
      } finally {
        await etcd.freeze(false);
      }
    };
    let seen!: (h: FleetHost) => void;
    const xSeen = new Promise<FleetHost>((r) => (seen = r));
    const view: FleetView = new FleetView({
      store: flaky,
      keys: KEYS,
      fleet: FLEET,
      host: 'me',
      log: pino({ level: 'silent' }),
      changed: () => {
        const x = view.hosts().find((h) => h.host === 'x');
        if (x) seen(x);
      },
    });
    view.start();
    try {
      expect(await xSeen).toMatchObject({ state: 'up', url: record.url });
      expect(reads.length).toBeGreaterThan(1);
    } finally {
      await view.close();
    }
  });
});
