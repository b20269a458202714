// The limits arbiter's rules (rq-beyond §B12.2) and config/limits.json, without processes: FIFO, settling, orphans, reset, the sweep, refusals.
import { afterEach, describe, expect, it } from 'vitest';
import { parseLimits } from '../../src/config/limits-config.js';
import { silentLogger } from '../../src/log.js';
import { LimitArbiter } from '../../src/mgr/limit-arbiter.js';

let arbiter: LimitArbiter | undefined;
afterEach(() => arbiter?.close());

interface Told {
  queue: string;
  id: string;
  key: string;
}

/** An arbiter whose grants are recorded; `answer` says what the queue replies to each. */
function make(opts: { settleMs?: number; answer?: (t: Told) => boolean | null; limits?: Record<string, number> } = {}) {
  const told: Told[] = [];
  const clock = { ms: 1_000_000 };
  const a = new LimitArbiter({
    now: () => clock.ms,
    settleMs: opts.settleMs ?? 0,
    log: silentLogger(),
    grant: async (queue, id, key) => {
      told.push({ queue, id, key });
      return opts.answer ? opts.answer({ queue, id, key }) : true;
    },
  });
  a.setConfig(parseLimits(opts.limits ?? { reports: 2 }));
  arbiter = a;
  return { a, told, clock };
}

const ID = (n: number) => `20261125.1200.00.000.${n}`;
const flush = () => new Promise((r) => setImmediate(r));

describe('acquire and release', () => {
  it('grants up to the concurrency, then parks in order of since, then arrival; a release promotes the first waiter', async () => {
    const { a, told } = make();
    expect(a.acquire('reports', `q1/${ID(1)}`, 100)).toEqual(['granted']);
    expect(a.acquire('reports', `q2/${ID(2)}`, 200)).toEqual(['granted']);
    expect(a.acquire('reports', `q3/${ID(3)}`, 300)).toEqual(['wait', 1]);
    // An older since goes before, whatever its arrival; an equal since goes after.
    expect(a.acquire('reports', `q1/${ID(4)}`, 150)).toEqual(['wait', 1]);
    expect(a.acquire('reports', `q2/${ID(5)}`, 150)).toEqual(['wait', 2]);
    expect(a.status().reports.waiting.map((w) => w.ref)).toEqual([`q1/${ID(4)}`, `q2/${ID(5)}`, `q3/${ID(3)}`]);
    a.release('reports', `q1/${ID(1)}`);
    await flush();
    expect(told).toEqual([{ queue: 'q1', id: ID(4), key: 'reports' }]);
    expect(a.status().reports.holders.map((h) => h.ref)).toEqual([`q2/${ID(2)}`, `q1/${ID(4)}`]);
  });

  it('is idempotent: a holder asking again is granted, a waiter keeps its place, a release of a stranger changes nothing', () => {
    const { a } = make({ limits: { one: 1 } });
    expect(a.acquire('one', `q/${ID(1)}`, 1)).toEqual(['granted']);
    expect(a.acquire('one', `q/${ID(1)}`, 1)).toEqual(['granted']);
    expect(a.acquire('one', `q/${ID(2)}`, 2)).toEqual(['wait', 1]);
    expect(a.acquire('one', `q/${ID(2)}`, 2)).toEqual(['wait', 1]);
    a.release('one', `q/${ID(9)}`);
    a.release('nokey', `q/${ID(9)}`);
    expect(a.status().one.holders).toHaveLength(1);
    // A waiter that withdraws leaves the line.
    a.release('one', `q/${ID(2)}`);
    expect(a.status().one.waiting).toEqual([]);
  });

  it('forgets an idle key, and with it a concurrency a message gave', () => {
    const { a } = make({ limits: {} });
    expect(a.acquire('adhoc', `q/${ID(1)}`, 1, 1)).toEqual(['granted']);
    expect(() => a.define('adhoc', 3)).toThrow('limit_concurrency: key "adhoc" has concurrency 1 (limit_concurrency of a message using it), received 3');
    a.release('adhoc', `q/${ID(1)}`);
    expect(a.status()).toEqual({});
    expect(a.define('adhoc', 3)).toEqual({ concurrency: 3, source: 'message' });
  });

  it('keeps the glob of the template a key came from (acquire or reset), for /metrics; a plain key has none', () => {
    const { a } = make({ limits: { reports: 2 } });
    a.acquire('api:acme', `q/${ID(1)}`, 1, 1, 'api:*');
    a.acquire('api:acme', `q/${ID(2)}`, 2, 1);
    a.reset('r', [{ key: 'mail:x', holder: `r/${ID(3)}`, since: 3, concurrency: 1, pattern: 'mail:*' }]);
    a.acquire('reports', `q/${ID(4)}`, 4);
    const s = a.status();
    expect([s['api:acme'].pattern, s['mail:x'].pattern, 'pattern' in s.reports]).toEqual(['api:*', 'mail:*', false]);
  });
});

describe('define', () => {
  it('takes the file first (exact, then the first glob), refuses a different value and a key with none', () => {
    const { a } = make({ limits: { 'api:acme': 5, 'api:*': 3, '*': 9 } });
    expect(a.define('api:acme')).toEqual({ concurrency: 5, source: 'config' });
    expect(a.define('api:other')).toEqual({ concurrency: 3, source: 'config' });
    expect(a.define('zzz', 9)).toEqual({ concurrency: 9, source: 'config' });
    expect(() => a.define('api:x', 4)).toThrow('limit_concurrency: key "api:x" has concurrency 3 (config/limits.json), received 4');
    const { a: bare } = make({ limits: {} });
    expect(() => bare.define('reports')).toThrow('limit: key "reports" has no concurrency: add it to config/limits.json or send limit_concurrency');
  });

  it('the file wins over a message value at acquire: the file may have changed since the create', () => {
    const { a } = make({ limits: { reports: 1 } });
    expect(a.acquire('reports', `q/${ID(1)}`, 1, 7)).toEqual(['granted']);
    expect(a.acquire('reports', `q/${ID(2)}`, 2, 7)).toEqual(['wait', 1]);
  });
});

describe('settling after a start', () => {
  it('only parks, then promotes by since once settled', async () => {
    const { a, told } = make({ settleMs: 30 });
    expect(a.acquire('reports', `late/${ID(3)}`, 300)).toEqual(['wait', 1]);
    expect(a.acquire('reports', `early/${ID(1)}`, 100)).toEqual(['wait', 1]);
    expect(a.acquire('reports', `mid/${ID(2)}`, 200)).toEqual(['wait', 2]);
    await new Promise((r) => setTimeout(r, 60));
    await flush();
    expect(told.map((t) => t.queue)).toEqual(['early', 'mid']);
  });
});

describe('queue deaths and the sweep', () => {
  it('a dead queue’s waiters go at once; its holders stay counted until its reset, then waiters are promoted', async () => {
    const { a, told } = make();
    a.acquire('reports', `dead/${ID(1)}`, 1);
    a.acquire('reports', `dead/${ID(2)}`, 2);
    a.acquire('reports', `dead/${ID(3)}`, 3);
    a.acquire('reports', `live/${ID(4)}`, 4);
    a.queueDied('dead');
    expect(a.status().reports.waiting.map((w) => w.ref)).toEqual([`live/${ID(4)}`]);
    expect(a.status().reports.holders.every((h) => h.orphaned)).toBe(true);
    expect(told).toEqual([]);
    expect(a.reset('dead').freed).toBe(2);
    await flush();
    expect(told).toEqual([{ queue: 'live', id: ID(4), key: 'reports' }]);
  });

  it('a restarted queue’s reset frees its orphans and enters its waiters in one step: its older messages go first, and learn it from the reply', async () => {
    const { a, told } = make({ limits: { one: 1 } });
    a.acquire('one', `dead/${ID(1)}`, 1);
    a.acquire('one', `live/${ID(5)}`, 50);
    a.queueDied('dead');
    // A reset frees only what a dead process held: a live holder of the queue is not touched.
    expect(a.reset('live').freed).toBe(0);
    const r = a.reset('dead', [
      { key: 'one', holder: `dead/${ID(2)}`, since: 2 },
      { key: 'nokey', holder: `dead/${ID(3)}`, since: 3 },
    ]);
    expect(r).toEqual({
      freed: 1,
      results: {
        [`dead/${ID(2)}`]: ['granted'],
        [`dead/${ID(3)}`]: expect.objectContaining({
          code: 'RQ_ERR_LIMIT_NO_CONCURRENCY',
          message: 'limit: key "nokey" has no concurrency: add it to config/limits.json or send limit_concurrency',
        }),
      },
    });
    await flush();
    // The older waiter of the restarted queue went first; it was not told (the reply says it).
    expect(told).toEqual([]);
    expect(a.status().one.waiting.map((w) => w.ref)).toEqual([`live/${ID(5)}`]);
  });

  it('after a start, nothing is granted before every expected queue has reported, however long after the settle time', async () => {
    const told: Told[] = [];
    const a = new LimitArbiter({
      now: Date.now,
      settleMs: 10,
      settleMaxMs: 60_000,
      log: silentLogger(),
      grant: async (queue, id, key) => (told.push({ queue, id, key }), true),
    });
    arbiter = a;
    a.setConfig(parseLimits({ one: 1 }));
    a.expect(['fast', 'slow']);
    expect(a.reset('fast', [{ key: 'one', holder: `fast/${ID(9)}`, since: 900 }]).results).toEqual({ [`fast/${ID(9)}`]: ['wait', 1] });
    await new Promise((r) => setTimeout(r, 30));
    expect(a.status().one.holders).toEqual([]);
    // The slow queue's older message arrives last and still goes first.
    expect(a.reset('slow', [{ key: 'one', holder: `slow/${ID(1)}`, since: 100 }]).results).toEqual({ [`slow/${ID(1)}`]: ['granted'] });
    expect(a.status().one.waiting.map((w) => w.ref)).toEqual([`fast/${ID(9)}`]);
    await flush();
    expect(told).toEqual([]);
  });

  it('a refused grant gives the slot back to the next waiter; an unanswered one stays held until the sweep', async () => {
    const { a, told, clock } = make({ limits: { one: 1 }, answer: (t) => (t.queue === 'gone' ? false : t.queue === 'mute' ? null : true) });
    a.acquire('one', `h/${ID(1)}`, 1);
    a.acquire('one', `gone/${ID(2)}`, 2);
    a.acquire('one', `mute/${ID(3)}`, 3);
    a.acquire('one', `ok/${ID(4)}`, 4);
    a.release('one', `h/${ID(1)}`);
    await flush();
    await flush();
    expect(told.map((t) => t.queue)).toEqual(['gone', 'mute']);
    expect(a.status().one.holders.map((h) => h.ref)).toEqual([`mute/${ID(3)}`]);
    // The sweep asks only about grants older than its threshold, and releases what the queue does not report.
    expect(a.queuesHoldingSince(clock.ms)).toEqual([]);
    clock.ms += 10_000;
    expect(a.queuesHoldingSince(clock.ms - 5000)).toEqual(['mute']);
    expect(a.reconcile('mute', [], clock.ms - 5000)).toBe(1);
    await flush();
    expect(told.map((t) => t.queue)).toEqual(['gone', 'mute', 'ok']);
    expect(a.reconcile('ok', [ID(4)], clock.ms)).toBe(0);
  });

  it('a raised concurrency promotes at once; a lowered one lets holders finish', async () => {
    const { a, told } = make({ limits: { reports: 1 } });
    a.acquire('reports', `q/${ID(1)}`, 1);
    a.acquire('reports', `q/${ID(2)}`, 2);
    a.acquire('reports', `q/${ID(3)}`, 3);
    a.setConfig(parseLimits({ reports: 2 }));
    await flush();
    expect(told.map((t) => t.id)).toEqual([ID(2)]);
    a.setConfig(parseLimits({ reports: 1 }));
    expect(a.status().reports.holders).toHaveLength(2);
    a.release('reports', `q/${ID(1)}`);
    expect(a.status().reports.holders).toHaveLength(1);
    expect(told).toHaveLength(1);
  });
});

describe('config/limits.json', () => {
  it.each([
    [{ reports: '2x' }, 'config/limits.json: "reports": expected a whole number 1-10000 (a JSON number, not text), received "2x"'],
    [{ reports: 0 }, 'config/limits.json: "reports": expected a whole number 1-10000, received 0'],
    [[1], 'config/limits.json: expected a JSON object of key: concurrency, received [1]'],
    [{ '': 1 }, 'config/limits.json: "": expected a key of 1-256 characters without control characters, received ""'],
  ])('refuses %j', (raw, text) => {
    expect(() => parseLimits(raw)).toThrow(text);
  });
});
