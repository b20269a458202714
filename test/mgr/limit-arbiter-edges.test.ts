// The limits arbiter at its edges: a key leaving the file, a clean stop's slots, the sweep's exceptions, one key's status, ties in line, settling's two clocks and close, and a grant whose queue failed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseLimits } from '../../src/config/limits-config.js';
import { silentLogger } from '../../src/log.js';
import { LimitArbiter } from '../../src/mgr/limit-arbiter.js';

const ID = (n: number) => `20261125.1200.00.000.${n}`;
const flush = () => new Promise((r) => setImmediate(r));
let arbiter: LimitArbiter | undefined;
afterEach(() => {
  arbiter?.close();
  vi.useRealTimers();
});

function make(
  opts: { settleMs?: number; settleMaxMs?: number; limits?: Record<string, number>; grant?: (q: string, id: string) => Promise<boolean | null> } = {},
) {
  const told: string[] = [];
  const clock = { ms: 1_000 };
  const a = new LimitArbiter({
    now: () => clock.ms,
    settleMs: opts.settleMs ?? 0,
    settleMaxMs: opts.settleMaxMs,
    log: silentLogger(),
    grant: (queue, id) => {
      told.push(`${queue}/${id}`);
      return opts.grant ? opts.grant(queue, id) : Promise.resolve(true);
    },
  });
  a.setConfig(parseLimits(opts.limits ?? { one: 1 }));
  arbiter = a;
  return { a, told, clock };
}

describe('setConfig', () => {
  it('a key dropped from the file keeps its concurrency as a message value; one added takes the file value', () => {
    const { a } = make({ limits: { one: 1 } });
    a.acquire('one', `q/${ID(1)}`, 1);
    a.acquire('msg', `q/${ID(2)}`, 2, 3);
    a.setConfig(parseLimits({ msg: 5 }));
    expect([a.status().one.source, a.status().one.concurrency]).toEqual(['message', 1]);
    expect([a.status().msg.source, a.status().msg.concurrency]).toEqual(['config', 5]);
    expect(() => a.define('one', 2)).toThrow(/limit_concurrency of a message using it/);
    a.setConfig(parseLimits({}));
    expect(a.status().msg.source).toBe('message');
  });
});

describe('freeQueue', () => {
  it("frees the queue's slots and waiters only, promotes others' waiters, and counts what it freed", async () => {
    const { a, told } = make({ limits: { one: 1, two: 2 } });
    a.acquire('one', `gone/${ID(1)}`, 1);
    a.acquire('one', `gone/${ID(2)}`, 2);
    a.acquire('one', `live/${ID(3)}`, 3);
    a.acquire('two', `live/${ID(4)}`, 4);
    a.acquire('two', `gone/${ID(5)}`, 5);
    expect(a.freeQueue('gone')).toBe(2);
    await flush();
    expect(told).toEqual([`live/${ID(3)}`]);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`live/${ID(3)}`]);
    expect(a.status().one.waiting).toEqual([]);
    expect(a.status().two.holders.map((h) => h.ref)).toEqual([`live/${ID(4)}`]);
    expect(a.freeQueue('nobody')).toBe(0);
  });
});

describe('reconcile (the sweep)', () => {
  it("releases only the queue's own unreported holders granted before the sweep began, never an orphan", async () => {
    const { a, clock } = make({ limits: { k: 9 } });
    a.acquire('k', `q/${ID(1)}`, 1);
    a.acquire('k', `q/${ID(2)}`, 2);
    a.acquire('k', `other/${ID(3)}`, 3);
    a.acquire('k', `dead/${ID(4)}`, 4);
    a.queueDied('dead');
    clock.ms = 2_000;
    a.acquire('k', `q/${ID(5)}`, 5);
    expect(a.queuesHoldingSince(2_000)).toEqual(['q', 'other']);
    expect(a.reconcile('q', [ID(2)], 2_000)).toBe(1);
    expect(
      a
        .status()
        .k.holders.map((h) => h.ref)
        .sort(),
    ).toEqual([`dead/${ID(4)}`, `other/${ID(3)}`, `q/${ID(2)}`, `q/${ID(5)}`]);
    expect(a.reconcile('dead', [], 5_000)).toBe(0);
    expect(a.reconcile('q', [], 1_000)).toBe(0);
    expect(a.reconcile('q', [], 2_001)).toBe(2);
  });
});

describe('status', () => {
  it('one key, or all; places in line from 1', () => {
    const { a } = make({ limits: { one: 1, two: 1 } });
    a.acquire('one', `q/${ID(1)}`, 1);
    a.acquire('one', `q/${ID(2)}`, 2);
    a.acquire('one', `q/${ID(3)}`, 3);
    a.acquire('two', `q/${ID(4)}`, 4);
    expect(Object.keys(a.status())).toEqual(['one', 'two']);
    expect(Object.keys(a.status('two'))).toEqual(['two']);
    expect(a.status('none')).toEqual({});
    expect(a.status('one').one.waiting.map((w) => w.position)).toEqual([1, 2]);
  });
});

describe('the line', () => {
  it('equal since: arrival decides, among many', () => {
    const { a } = make({ limits: { one: 1 } });
    a.acquire('one', `q/${ID(0)}`, 0);
    for (let i = 1; i <= 6; i++) a.acquire('one', `q/${ID(i)}`, i % 2 ? 10 : 5);
    expect(a.status().one.waiting.map((w) => w.ref)).toEqual([2, 4, 6, 1, 3, 5].map((i) => `q/${ID(i)}`));
  });

  it('a reset of a waiter already in line keeps its place and its arrival', () => {
    const { a } = make({ limits: { one: 1 } });
    a.acquire('one', `h/${ID(0)}`, 0);
    a.acquire('one', `q/${ID(1)}`, 5);
    a.acquire('one', `r/${ID(2)}`, 5);
    expect(a.reset('q', [{ key: 'one', holder: `q/${ID(1)}`, since: 5 }]).results).toEqual({ [`q/${ID(1)}`]: ['wait', 1] });
    expect(a.status().one.waiting.map((w) => w.ref)).toEqual([`q/${ID(1)}`, `r/${ID(2)}`]);
  });

  it('a release of a key nobody uses is nothing', () => {
    const { a } = make();
    expect(() => a.release('none', `q/${ID(1)}`)).not.toThrow();
    expect(a.status()).toEqual({});
  });

  it('a queue that fails to take a grant keeps the slot held (only a refusal gives it back)', async () => {
    const { a } = make({ grant: () => Promise.reject(new Error('gone')) });
    a.acquire('one', `h/${ID(1)}`, 1);
    a.acquire('one', `q/${ID(2)}`, 2);
    a.release('one', `h/${ID(1)}`);
    await flush();
    await flush();
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`q/${ID(2)}`]);
  });
});

describe('settling', () => {
  it('without a settle time nothing waits; with one, the minimum alone ends it when every queue reported', async () => {
    vi.useFakeTimers();
    const { a } = make({ settleMs: 100, settleMaxMs: 10_000 });
    expect(a.acquire('one', `q/${ID(1)}`, 1)).toEqual(['wait', 1]);
    await vi.advanceTimersByTimeAsync(99);
    expect(a.status().one.holders).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`q/${ID(1)}`]);
  });

  it('a queue expected and not reported holds settling past the minimum until the ceiling', async () => {
    vi.useFakeTimers();
    const { a } = make({ settleMs: 100, settleMaxMs: 1_000 });
    a.expect(['slow']);
    a.acquire('one', `q/${ID(1)}`, 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(a.status().one.holders).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`q/${ID(1)}`]);
  });

  it('the ceiling defaults to the settle time', async () => {
    vi.useFakeTimers();
    const { a } = make({ settleMs: 100 });
    a.expect(['slow']);
    a.acquire('one', `q/${ID(1)}`, 1);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`q/${ID(1)}`]);
  });

  it('the last report before the minimum does not end settling; the minimum then does', async () => {
    vi.useFakeTimers();
    const { a } = make({ settleMs: 100, settleMaxMs: 10_000 });
    a.expect(['q']);
    expect(a.reset('q', [{ key: 'one', holder: `q/${ID(1)}`, since: 1 }]).results).toEqual({ [`q/${ID(1)}`]: ['wait', 1] });
    await vi.advanceTimersByTimeAsync(100);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`q/${ID(1)}`]);
  });

  it('after settling a reset grants at once; a reset with no waiters answers none', () => {
    const { a } = make();
    expect(a.reset('q')).toEqual({ freed: 0, results: {} });
    expect(a.reset('q', [{ key: 'one', holder: `q/${ID(1)}`, since: 1 }]).results).toEqual({ [`q/${ID(1)}`]: ['granted'] });
  });

  it('close stops the settle timers: nothing is granted after it', async () => {
    vi.useFakeTimers();
    const { a } = make({ settleMs: 100 });
    a.acquire('one', `q/${ID(1)}`, 1);
    a.close();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.status().one.holders).toEqual([]);
  });
});
