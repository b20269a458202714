// FleetView on a real etcd: a read that fails after the watch is made is tried again, since the watch alone never brings what was there before it;
// a read answered after the watch brought newer events does not undo them.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { FleetView } from '../../src/fleet/fleet-view.js';
import type { FleetHost } from '../../src/ipc/fleet-reply.js';
import { FLEET, KEYS } from './fleet-harness.js';

let etcd: EtcdProc;
const MEMBER = { state: 'member', since: '' } as const;
const hostRecord = (host: string) => ({ host, url: 'http://127.0.0.1:1/', version: '1', started_at: new Date().toISOString(), instance: 'i', queues: {} });
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

  it('a read answered after newer watch events is laid under them: a host that joined or left meanwhile stays so', async () => {
    await store.put(KEYS.host('z'), JSON.stringify(hostRecord('z')));
    // The view's read is answered once a host has joined and another left after it, and the view's watch has brought both.
    let heard!: () => void;
    let applied!: () => void;
    let events = 0;
    const readApplied = new Promise<void>((r) => (applied = r));
    const bothHeard = new Promise<void>((r) => (heard = r));
    const late = Object.create(store) as EtcdStore;
    late.readPrefix = async (prefix) => {
      const read = await store.readPrefix(prefix);
      await store.put(KEYS.host('y'), JSON.stringify(hostRecord('y')));
      await store.delete(KEYS.host('z'));
      await bothHeard;
      return read;
    };
    const warned: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warned.push(line) });
    const view: FleetView = new FleetView({
      store: late,
      keys: KEYS,
      fleet: FLEET,
      host: 'me',
      log,
      changed: () => {
        // Before the read is applied, each change is one of the watch's two events.
        if (!view.view(MEMBER, []).etcd.reachable) return void (++events === 2 && heard());
        applied();
      },
    });
    view.start();
    try {
      await readApplied;
      const states = Object.fromEntries(view.hosts().map((h) => [h.host, h.state]));
      // z left before the view ever saw it up: not listed, and no warning that it dropped out.
      expect(states).toEqual({ y: 'up' });
      expect(warned).toEqual([]);
    } finally {
      await view.close();
      await store.delete(KEYS.host('y'));
    }
  });

  it('a first read that etcd does not answer is tried again: a host put before the watch is seen', async () => {
    const record = hostRecord('x');
    await store.put(KEYS.host('x'), JSON.stringify(record));
    // The first read of the view is sent to an etcd that is frozen for it, and times out; its watch is already made.
    const reads: string[] = [];
    const flaky = Object.create(store) as EtcdStore;
    flaky.readPrefix = async (prefix) => {
      reads.push(prefix);
      if (reads.length > 1) return store.readPrefix(prefix);
      await etcd.freeze(true);
      try {
        return await store.readPrefix(prefix);
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
