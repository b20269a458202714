// Transitions' changes of memory alone (a field change, park and release, acknowledgements, the load at start) against a real MessageIndex.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { MessageIndex } from '../../../src/queue/index/message-index.js';
import { QueueEvents } from '../../../src/queue/status/queue-events.js';
import type { QueueSpool } from '../../../src/spool/queue-spool.js';
import type { Recovered } from '../../../src/spool/recovery.js';
import { Transitions } from '../../../src/queue/transitions/transitions.js';

const NOW = 1_000_000_000;
const msg = (id: string, due = 0, extra: Partial<Message> = {}) => ({ msg_id: id, dest: 'q', due, ...extra }) as Message;

let index: MessageIndex;
let moves: Transitions;
let pumps: number;
let max_age: number | null;

beforeEach(() => {
  pumps = 0;
  max_age = null;
  index = new MessageIndex(
    () => NOW,
    () => (max_age === null ? null : NOW - max_age),
  );
  // These moves touch memory only: a spool that is used fails the test.
  const spool = new Proxy(
    {},
    {
      get: () => {
        throw new Error('no disk expected');
      },
    },
  ) as QueueSpool;
  moves = new Transitions({ spool, index, events: new QueueEvents(), now: () => NOW, admit: () => false, pump: () => void pumps++ });
});

describe('changed', () => {
  it('a queued message takes the change in place and the que re-sorts it, then pumps', () => {
    index.enqueue(msg('a', 10));
    index.enqueue(msg('b', 20));
    moves.changed('b', { due: 5 });
    expect(index.queuedInOrder(2).map((m) => m.msg_id)).toEqual(['b', 'a']);
    expect(index.queued('b')?.due).toBe(5);
    expect(pumps).toBe(1);
  });

  it('without the whole message, one not queued is left alone', () => {
    index.addPrep('p', null);
    index.park(msg('k', 10), 'depends');
    moves.changed('p', { due: 5 });
    moves.changed('k', { due: 5 });
    expect(index.takePrep('p')).toBeNull();
    expect(index.parkedMessages()[0].due).toBe(10);
    expect(pumps).toBe(0);
  });

  it('with the whole message: a prep one is held whole, a parked one takes the change; no pump', () => {
    index.addPrep('p', null);
    index.park(msg('k', 10), 'limit');
    const whole = msg('p', 7);
    moves.changed('p', { due: 7 }, whole);
    moves.changed('k', { due: 7 }, msg('k', 7));
    expect(index.takePrep('p')).toBe(whole);
    expect(index.parkedMessages()[0].due).toBe(7);
    expect(pumps).toBe(0);
  });
});

describe('taking and putting back', () => {
  it('takePrep, take (queued or parked) and takeExpired hand over what memory had', () => {
    const p = msg('p');
    index.addPrep('p', p);
    index.enqueue(msg('a'));
    index.park(msg('k'), 'depends');
    expect(moves.takePrep('p')).toBe(p);
    expect(moves.takePrep('p')).toBeUndefined();
    expect(moves.take('a')?.msg_id).toBe('a');
    expect(moves.take('k')?.msg_id).toBe('k');
    expect(index.counts().que).toBe(0);
    max_age = 1;
    index.enqueue(msg('old'));
    expect(moves.takeExpired().map((m) => m.msg_id)).toEqual(['old']);
  });

  it('forgetPrep keeps the id in prep without the message', () => {
    index.addPrep('p', msg('p'));
    moves.forgetPrep('p');
    expect(index.takePrep('p')).toBeNull();
  });

  it('park, unpark, release and enqueue', () => {
    const k = msg('k');
    moves.park(k, 'depends');
    expect(index.liveState('k')).toBe('que');
    expect(index.isQueued('k')).toBe(false);
    expect(moves.unpark('k')).toBe(k);
    moves.park(k, 'limit');
    moves.release(k);
    expect(index.parkedMessages()).toEqual([]);
    expect(index.isQueued('k')).toBe(true);
    moves.enqueue(msg('e'));
    expect(index.isQueued('e')).toBe(true);
  });

  it('acked lowers the err count by as many; reconfigured works the expiry deadlines out again', () => {
    index.setFinished('err', 5);
    moves.acked(2);
    expect(index.counts().err).toBe(3);
    index.enqueue(msg('a'));
    expect(index.takeExpired()).toEqual([]);
    max_age = 1;
    moves.reconfigured();
    expect(index.takeExpired().map((m) => m.msg_id)).toEqual(['a']);
  });
});

describe('load', () => {
  it('takes prep ids, the que less those that wait, and the finished counts', async () => {
    const rec = { prep: ['p'], que: [msg('a'), msg('w')] } as unknown as Recovered;
    await moves.load(rec, { done: 4, relayed: 2, err: 1 }, async (m) => m.msg_id === 'w');
    expect(index.counts()).toEqual({ prep: 1, que: 1, run: 0, done: 4, relayed: 2, err: 1 });
    expect(index.takePrep('p')).toBeNull();
    expect([index.isQueued('a'), index.isQueued('w')]).toEqual([true, false]);
  });
});
