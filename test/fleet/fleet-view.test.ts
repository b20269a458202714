// FleetView on a real etcd: a read that fails after the watch is made is tried again, since the watch alone never brings what was there before it;
// a read and the watch's events, in whichever order they arrive, end in the fleet as etcd holds it, each departure reported once.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { EtcdStore, type WatchEvents } from '../../src/fleet/etcd-client.js';
import { FleetView } from '../../src/fleet/fleet-view.js';
import { FLEET, KEYS } from './fleet-harness.js';
import { capturedLog } from '../helpers/captured-log.js';

let etcd: EtcdProc;
let store: EtcdStore;
const MEMBER = { state: 'member', since: '' } as const;
const URL = 'http://127.0.0.1:1/';
const hostRecord = (host: string) => ({ host, url: URL, version: '1', started_at: new Date().toISOString(), instance: 'i', queues: {} });

/** Host `h` up, with the `seen` record a joining host writes: its departure is what the view reports (a warning, left_at written). */
async function upWithSeen(h: string): Promise<void> {
  await store.put(KEYS.seenHost(h), JSON.stringify({ host: h, url: URL, joined_at: new Date().toISOString() }));
  await store.put(KEYS.host(h), JSON.stringify(hostRecord(h)));
}

/** A view on `through` whose warnings are kept; `read()` resolves once a read of it has been applied (it is reachable then). */
function viewOn(through: EtcdStore, onChange?: (states: Record<string, string>) => void) {
  const { log, lines: warnings } = capturedLog('warn');
  let applied!: () => void;
  const read = new Promise<void>((r) => (applied = r));
  const view: FleetView = new FleetView({
    store: through,
    keys: KEYS,
    fleet: FLEET,
    host: 'me',
    log,
    changed: () => {
      if (view.view(MEMBER, []).etcd.reachable) applied();
      onChange?.(states());
    },
  });
  const states = (): Record<string, string> => Object.fromEntries(view.hosts().map((h) => [h.host, h.state]));
  return { view, warnings, read, states };
}

/** `store` with its watch's events passed to `deliver` instead of straight to the view. */
function watchThrough(deliver: (event: () => void, kind: 'put' | 'delete') => void): EtcdStore {
  const through = Object.create(store) as EtcdStore;
  through.watchPrefix = (prefix, events: WatchEvents) =>
    store.watchPrefix(prefix, {
      ...events,
      put: (kv) => deliver(() => events.put(kv), 'put'),
      delete: (key, rev) => deliver(() => events.delete(key, rev), 'delete'),
    });
  return through;
}

/** Starts `v`; the hosts' states `at` resolves to are `expected`, and no departure was reported. */
async function endsWith(v: ReturnType<typeof viewOn>, at: Promise<Record<string, string>>, expected: Record<string, string>): Promise<void> {
  v.view.start();
  try {
    expect(await at).toEqual(expected);
    expect(v.warnings).toEqual([]);
  } finally {
    await v.view.close();
  }
}

describe('FleetView', { timeout: 30_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url], callTimeoutMs: 300 });
  }, 30_000);

  afterEach(async () => {
    for (const kv of await store.getPrefix(KEYS.fleet)) await store.delete(kv.key);
  });

  afterAll(async () => {
    store?.close();
    await etcd?.cleanup();
  });

  it('a read answered after newer watch events is laid under them: a host that joined meanwhile is up, one that left is gone, reported once', async () => {
    await upWithSeen('z');
    // The view's read is answered only once y has joined, z has left and x has come and gone after it, and the view's watch has brought all five.
    let delivered = 0;
    let allDelivered!: () => void;
    const all = new Promise<void>((r) => (allDelivered = r));
    const late = watchThrough((event) => (event(), ++delivered === 5 && allDelivered()));
    late.readPrefix = async (prefix) => {
      const read = await store.readPrefix(prefix);
      await store.put(KEYS.host('y'), JSON.stringify(hostRecord('y')));
      await store.delete(KEYS.host('z'));
      await upWithSeen('x');
      await store.delete(KEYS.host('x'));
      await all;
      return read;
    };
    const v = viewOn(late);
    v.view.start();
    try {
      await v.read;
      // x was never up in this view: the events the answer took in are not applied again after it, so its departure is not reported either.
      expect(v.states()).toEqual({ x: 'gone', y: 'up', z: 'gone' });
      expect(v.warnings.map((w) => [w.host, w.msg])).toEqual([['z', 'fleet: a host dropped out (its lease expired)']]);
    } finally {
      await v.view.close();
    }
  });

  it("a resumed watch's events older than the read already applied change nothing: a host that left and came back is not reported gone", async () => {
    await upWithSeen('z');
    // As after a reconnection: the read is answered first, then the watch brings what it missed, all of it older than the read.
    const held: (() => void)[] = [];
    let releasing = false;
    let bothHeld!: () => void;
    const both = new Promise<void>((r) => (bothHeld = r));
    const behind = watchThrough((event) => {
      if (releasing) return event();
      if (held.push(event) === 2) bothHeld();
    });
    behind.readPrefix = async (prefix) => {
      // z's lease expired and it joined again while the watch was away.
      await store.delete(KEYS.host('z'));
      await store.put(KEYS.host('z'), JSON.stringify(hostRecord('z')));
      return store.readPrefix(prefix);
    };
    const v = viewOn(behind);
    v.view.start();
    try {
      await v.read;
      await both;
      releasing = true;
      for (const event of held.splice(0)) event();
      expect(v.states()).toEqual({ z: 'up' });
      expect(v.warnings).toEqual([]);
    } finally {
      await v.view.close();
    }
  });

  it('of two reads in flight, an answer older than the one applied is dropped: a host that joined between them stays up', async () => {
    let events!: WatchEvents;
    const through = Object.create(store) as EtcdStore;
    through.watchPrefix = (prefix, ev) => ((events = ev), store.watchPrefix(prefix, ev));
    let first = true;
    let firstAnswered = false;
    let releaseFirst!: () => void;
    const secondApplied = new Promise<void>((r) => (releaseFirst = r));
    let done!: (states: Record<string, string>) => void;
    const afterFirst = new Promise<Record<string, string>>((r) => (done = r));
    through.readPrefix = async (prefix) => {
      if (!first) return store.readPrefix(prefix);
      first = false;
      const read = await store.readPrefix(prefix);
      await upWithSeen('y');
      // A reconnection meanwhile: a second read, answered (with y) before this one.
      events.connected(false);
      await secondApplied;
      firstAnswered = true;
      return read;
    };
    await endsWith(
      viewOn(through, (states) => (firstAnswered ? done(states) : states.y === 'up' && releaseFirst())),
      afterFirst,
      { y: 'up' },
    );
  });

  it('of two reads in flight, the newer answered last still has the events after it: a host that joined after both reads stays up', async () => {
    let calls = 0;
    let events!: WatchEvents;
    let yIn!: () => void;
    const yHeld = new Promise<void>((r) => (yIn = r));
    const through = Object.create(store) as EtcdStore;
    through.watchPrefix = (prefix, ev) => {
      events = ev;
      return store.watchPrefix(prefix, { ...ev, put: (kv) => (ev.put(kv), kv.key === KEYS.host('y') && yIn()) });
    };
    let answerB!: (read: Awaited<ReturnType<EtcdStore['readPrefix']>>) => void;
    const bAnswer = new Promise<Awaited<ReturnType<EtcdStore['readPrefix']>>>((r) => (answerB = r));
    let bLaid!: () => void;
    const bDone = new Promise<void>((r) => (bLaid = r));
    through.readPrefix = async (prefix) => {
      if (++calls === 2) return bAnswer;
      if (calls > 2) return store.readPrefix(prefix);
      // Read A, then (a reconnection) read B: etcd serves B first, then A at a newer revision, then y joins.
      events.connected(false);
      const b = await store.readPrefix(prefix);
      await store.put(`${KEYS.fleet}filler`, 'x');
      const a = await store.readPrefix(prefix);
      await upWithSeen('y');
      await yHeld;
      // B is answered first and laid, with y over it; then A, newer than B but older than y.
      answerB(b);
      await bDone;
      return a;
    };
    let changes = 0;
    let done!: (states: Record<string, string>) => void;
    const afterA = new Promise<Record<string, string>>((r) => (done = r));
    await endsWith(
      viewOn(through, (states) => (++changes === 1 ? bLaid() : done(states))),
      afterA,
      { y: 'up' },
    );
  });

  it('a first read that etcd does not answer is tried again: a host put before the watch is seen, one put during the failed read at once', async () => {
    const record = hostRecord('x');
    await store.put(KEYS.host('x'), JSON.stringify(record));
    // The first read of the view is sent to an etcd that is frozen for it, and times out; its watch is already made, and has brought y.
    const reads: string[] = [];
    let yBrought!: () => void;
    const yIn = new Promise<void>((r) => (yBrought = r));
    const flaky = watchThrough((event) => (event(), yBrought()));
    let yBeforeRetry: string | undefined;
    const v = viewOn(flaky);
    flaky.readPrefix = async (prefix) => {
      reads.push(prefix);
      if (reads.length > 1) {
        yBeforeRetry = v.states().y;
        return store.readPrefix(prefix);
      }
      await store.put(KEYS.host('y'), JSON.stringify(hostRecord('y')));
      await yIn;
      await etcd.freeze(true);
      try {
        return await store.readPrefix(prefix);
      } finally {
        await etcd.freeze(false);
      }
    };
    v.view.start();
    try {
      await v.read;
      expect(v.view.hosts().find((h) => h.host === 'x')).toMatchObject({ state: 'up', url: record.url });
      expect(reads.length).toBeGreaterThan(1);
      // Held while the failed read was in flight, applied when it failed: not only once the next read came.
      expect(yBeforeRetry).toBe('up');
    } finally {
      await v.view.close();
    }
  });

  it("etcd's revisions starting over (its data lost) do not leave the view behind: its watch is made anew and the next read taken", async () => {
    const filler = async (n: number) => {
      for (let i = 0; i < n; i++) await store.put(`${KEYS.fleet}filler`, String(i));
    };
    await filler(40);
    let restarted = false;
    let answered = false;
    let reread!: (states: Record<string, string>) => void;
    const afterRestart = new Promise<Record<string, string>>((r) => (reread = r));
    const through = Object.create(store) as EtcdStore;
    through.readPrefix = async (prefix) => {
      if (!restarted) return store.readPrefix(prefix);
      // The new etcd's revision below the view's last read, and below where its watch would resume.
      await filler(3);
      await store.put(KEYS.host('w'), JSON.stringify(hostRecord('w')));
      const read = await store.readPrefix(prefix);
      answered = true;
      return read;
    };
    const want = new Map<string, () => void>();
    const upNow = (host: string) => new Promise<void>((r) => want.set(host, r));
    const mUp = upNow('m');
    const vUp = upNow('v');
    const v = viewOn(through, (states) => {
      if (answered) reread(states);
      for (const [h, state] of Object.entries(states)) if (state === 'up') want.get(h)?.();
    });
    v.view.start();
    try {
      await v.read;
      // Traffic the watch sees after the read: where it would resume moves past the read's revision.
      await filler(10);
      await store.put(KEYS.host('m'), JSON.stringify(hostRecord('m')));
      await mUp;
      await etcd.stop();
      fs.rmSync(path.join(etcd.dir, 'data'), { recursive: true, force: true });
      restarted = true;
      await etcd.run();
      expect(await afterRestart).toEqual({ w: 'up' });
      // And the new watch follows the new revisions: a host that joins now is seen.
      await store.put(KEYS.host('v'), JSON.stringify(hostRecord('v')));
      await vUp;
      expect(v.states()).toEqual({ v: 'up', w: 'up' });
    } finally {
      await v.view.close();
    }
  });
});
