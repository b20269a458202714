// LimitGate in this process against a scripted rq-mgr: keys, the create check, reset, park and acquire, and their retries on the peer back-off.
import { describe, expect, it, vi } from 'vitest';
import type { AcquireAnswer } from '../../../src/ipc/mgr-client.js';
import { idTime } from '../../../src/message/message-id.js';
import type { CreateFields } from '../../../src/message/message.js';
import { ID, harness, msg, nope, ok, settle } from './limit-gate-harness.js';

describe('keyOf', () => {
  it('takes the message limit over the queue limit, expands it, and has none without either', () => {
    const h = harness({ limit: 'q:{queue}' });
    expect(h.gate.keyOf({ limit: 'api:{param1}', param1: 'x' })).toBe('api:x');
    expect(h.gate.keyOf({})).toBe('q:q');
    expect(h.gate.keyOf({ limit: 7 as unknown as string })).toBe('q:q');
    expect(harness().gate.keyOf({})).toBeNull();
  });
});

describe('checkCreate', () => {
  it('refuses limit_concurrency without a limit, and asks rq-mgr nothing without a key', async () => {
    const h = harness();
    await expect(h.gate.checkCreate({ limit_concurrency: 2 } as CreateFields)).rejects.toMatchObject({
      code: 'RQ_ERR_INVALID_FIELD',
      message: 'limit_concurrency: expected a limit on the message or its queue to apply to, received 2',
    });
    await h.gate.checkCreate({} as CreateFields);
    expect(h.calls).toEqual([]);
  });

  it('refuses an expanded key that is empty, before asking rq-mgr', async () => {
    const h = harness();
    await expect(h.gate.checkCreate({ limit: '{param1}' } as CreateFields)).rejects.toMatchObject({
      code: 'RQ_ERR_INVALID_FIELD',
      message: expect.stringContaining('limit'),
    });
    expect(h.calls).toEqual([]);
  });

  it('defines the key with its concurrency; an unanswered rq-mgr and a refusal are errors with their code', async () => {
    const h = harness();
    await h.gate.checkCreate({ limit: 'k', limit_concurrency: 3 } as CreateFields);
    expect(h.calls).toEqual(['define k 3']);
    h.answers.define = [new Error('ECONNREFUSED')];
    await expect(h.gate.checkCreate({ limit: 'k' } as CreateFields)).rejects.toMatchObject({
      code: 'RQ_ERR_LIMITS_UNAVAILABLE',
      message: 'limit: the limits table (rq-mgr) did not answer (ECONNREFUSED)',
    });
    const text = 'limit: key k has no concurrency: add it to config/limits.json or send limit_concurrency';
    h.answers.define = [{ ok: false, code: 'RQ_ERR_LIMIT_NO_CONCURRENCY', text }];
    await expect(h.gate.checkCreate({ limit: 'k' } as CreateFields)).rejects.toMatchObject({ code: 'RQ_ERR_LIMIT_NO_CONCURRENCY', message: text });
    h.answers.define = [{ ok: false, code: 'RQ_ERR_USAGE', text: 'something else' }];
    await expect(h.gate.checkCreate({ limit: 'k' } as CreateFields)).rejects.toMatchObject({ code: 'RQ_ERR_USAGE', message: 'something else' });
  });
});

describe('reset, park and acquire', () => {
  it('no acquire goes out before the reset; the reset carries the parked waiters and its answers apply', async () => {
    const h = harness({ limit: 'api:{param1}' });
    h.gate.park(msg(1, { param1: 'a', due: 10 }), 'api:a');
    h.gate.park(msg(2, { param1: 'b', due: 2e9, limit_concurrency: 4 }), 'api:b');
    h.gate.park(msg(3, { param1: 'c' }), 'api:c');
    await settle();
    expect(h.calls).toEqual([]);
    expect(h.index.park).toHaveBeenCalledWith(expect.objectContaining({ msg_id: ID(1) }), 'limit');
    expect(h.gate.waitingList()).toEqual([
      { msg_id: ID(1), reason: 'limit', key: 'api:a', position: null },
      { msg_id: ID(2), reason: 'limit', key: 'api:b', position: null },
      { msg_id: ID(3), reason: 'limit', key: 'api:c', position: null },
    ]);
    h.answers.reset = [
      {
        ok: true,
        value: {
          freed: 2,
          results: { [`q/${ID(1)}`]: { granted: true }, [`q/${ID(2)}`]: { granted: false, position: 3 }, [`q/${ID(3)}`]: { refused: 'too long' } },
        },
      },
    ];
    await h.gate.reset();
    expect(h.resets).toEqual([
      {
        queue: 'q',
        acquire: [
          { key: 'api:a', holder: `q/${ID(1)}`, since: idTime(ID(1)), concurrency: undefined, pattern: 'api:*' },
          { key: 'api:b', holder: `q/${ID(2)}`, since: 2e12, concurrency: 4, pattern: 'api:*' },
          { key: 'api:c', holder: `q/${ID(3)}`, since: idTime(ID(3)), concurrency: undefined, pattern: 'api:*' },
        ],
      },
    ]);
    await settle();
    // Every waiter was answered by the reset: none asks again.
    expect(h.acquires).toEqual([]);
    expect(h.notes).toEqual([
      [ID(1), { event: 'limit_grant', key: 'api:a' }],
      [ID(2), { event: 'limit_wait', key: 'api:b', position: 3 }],
    ]);
    expect(h.refused).toEqual([[ID(3), 'too long']]);
    expect(h.index.unpark).toHaveBeenCalledWith(ID(3));
    expect(h.pumps()).toBe(1);
    expect(h.gate.waitingOf(ID(1))).toEqual({ reason: 'limit', key: 'api:a', position: 0 });
    expect(h.gate.waitingOf(ID(2))).toEqual({ reason: 'limit', key: 'api:b', position: 3 });
    expect(h.gate.waitingOf(ID(3))).toBeUndefined();
    expect(h.gate.held()).toEqual([ID(1)]);
  });

  it('a waiter the reset did not carry an answer for asks alone; a plain key has no pattern', async () => {
    const h = harness();
    h.gate.park(msg(1, { limit: 'plain' }), 'plain');
    h.answers.acquire = [{ granted: false, position: 2 }];
    await h.gate.reset();
    await settle();
    expect(h.acquires).toEqual([{ key: 'plain', holder: `q/${ID(1)}`, since: idTime(ID(1)), concurrency: undefined, pattern: undefined }]);
    expect(h.gate.waitingOf(ID(1))).toEqual({ reason: 'limit', key: 'plain', position: 2 });
  });

  it('without an rq-mgr the reset sends nothing and acquires go out at once', async () => {
    const h = harness();
    h.present.yes = false;
    await h.gate.reset();
    h.gate.park(msg(1), 'k');
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`]);
    expect(h.gate.takeGranted()).toMatchObject({ msg_id: ID(1) });
  });

  it('an unanswered or refused reset is sent again after 1 s', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.answers.reset = [new Error('down'), nope, { ok: true, value: { freed: 0, results: {} } }];
    const done = h.gate.reset();
    await vi.advanceTimersByTimeAsync(999);
    expect(h.resets.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.resets.length).toBe(2);
    await vi.advanceTimersByTimeAsync(2000);
    await done;
    expect(h.resets.length).toBe(3);
  });

  it('a reset stops asking once rq-mgr is gone', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.answers.reset = [new Error('down')];
    const done = h.gate.reset();
    await vi.advanceTimersByTimeAsync(0);
    h.present.yes = false;
    await vi.advanceTimersByTimeAsync(5000);
    await done;
    expect(h.resets.length).toBe(1);
  });

  it('an unanswered acquire is asked again after 1 s, then 2 s', async () => {
    vi.useFakeTimers();
    const h = harness();
    await h.gate.reset();
    h.answers.acquire = [new Error('timeout'), new Error('timeout'), { granted: true }];
    h.gate.park(msg(1), 'k');
    await vi.advanceTimersByTimeAsync(0);
    expect(h.acquires.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(h.acquires.length).toBe(2);
    await vi.advanceTimersByTimeAsync(1999);
    expect(h.acquires.length).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.acquires.length).toBe(3);
    expect(h.gate.held()).toEqual([ID(1)]);
  });

  it('a message withdrawn while its acquire is out gives back what the answer gave it', async () => {
    const h = harness();
    await h.gate.reset();
    h.calls.length = 0;
    let answer!: (a: AcquireAnswer) => void;
    h.answers.acquire = [new Promise<AcquireAnswer>((r) => (answer = r))];
    h.gate.park(msg(1), 'k');
    await settle();
    h.gate.withdraw(ID(1));
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`, `release k q/${ID(1)}`]);
    answer({ granted: true });
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`, `release k q/${ID(1)}`, `release k q/${ID(1)}`]);
    expect(h.gate.held()).toEqual([]);
    expect(h.notes).toEqual([]);
  });

  it('a parked message re-parked (paused, then resumed) waits for its release before it asks again', async () => {
    const h = harness();
    await h.gate.reset();
    h.calls.length = 0;
    h.answers.acquire = [{ granted: false, position: 1 }];
    h.gate.park(msg(1), 'k');
    await settle();
    let released!: (a: unknown) => void;
    h.answers.release = [new Promise((r) => (released = r)), ok];
    h.gate.withdrawAll();
    h.gate.park(msg(1), 'k');
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`, `release k q/${ID(1)}`]);
    released(ok);
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`, `release k q/${ID(1)}`, `acquire q/${ID(1)}`]);
  });
});

describe('reset at its edges', () => {
  it('carries at most 10,000 waiters; the rest ask one by one after it', async () => {
    const h = harness();
    const results: Record<string, unknown> = {};
    for (let n = 1; n <= 10_001; n++) {
      h.gate.park(msg(n), 'k');
      results[`q/${ID(n)}`] = { granted: false, position: n };
    }
    h.answers.reset = [{ ok: true, value: { freed: 0, results } }];
    await h.gate.reset();
    await settle();
    expect(h.resets[0].acquire.length).toBe(10_000);
    expect(h.acquires.map((a) => a.holder)).toEqual([`q/${ID(10_001)}`]);
  });

  it("a reset's answer for a message withdrawn meanwhile is not applied", async () => {
    const h = harness();
    h.gate.park(msg(1), 'k');
    let answer!: (a: unknown) => void;
    h.answers.reset = [new Promise((r) => (answer = r))];
    const done = h.gate.reset();
    await settle();
    h.gate.withdraw(ID(1));
    answer({ ok: true, value: { freed: 0, results: { [`q/${ID(1)}`]: { granted: true } } } });
    await done;
    expect(h.gate.held()).toEqual([]);
    expect(h.notes).toEqual([]);
    expect(h.pumps()).toBe(0);
  });

  it('close stops a reset that rq-mgr does not answer', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.answers.reset = [new Error('down')];
    void h.gate.reset();
    await vi.advanceTimersByTimeAsync(0);
    h.gate.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.resets.length).toBe(1);
  });
});
