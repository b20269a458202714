// A day record and the totals as the stats files hold them: empty values, a faithful round trip, and damaged fields read as zero.
import { describe, expect, it } from 'vitest';
import { MEMORY_BUCKETS, PROM_BUCKETS } from '../../../src/ipc/stats-reply.js';
import { dayOf, emptyDay, emptyTotals, reviveDay, reviveTotals, zeroOutcomes } from '../../../src/queue/observers/day-stats.js';
import { observe, observeProm } from '../../../src/queue/observers/distribution.js';

const roundTrip = <T>(v: T): unknown => JSON.parse(JSON.stringify(v));

describe('day records', () => {
  it('dayOf is the UTC date, to the last millisecond of the day', () => {
    expect(dayOf(Date.parse('2026-11-25T23:59:59.999Z'))).toBe('20261125');
    expect(dayOf(Date.parse('2026-11-26T00:00:00.000Z'))).toBe('20261126');
  });

  it('an empty day and empty totals are all zeros, with the bins and buckets of an empty histogram', () => {
    const dist = { count: 0, mean: 0, variance: 0, min: null, max: null, histogram: { s: [0], m: [0], h: [0], d: [] } };
    expect(emptyDay('20261125')).toEqual({
      date: '20261125',
      created: 0,
      started: 0,
      done: 0,
      relayed: 0,
      err: 0,
      outcomes: zeroOutcomes(),
      failures: 0,
      retries: 0,
      resends: 0,
      timeouts: 0,
      stalls: 0,
      ooms: 0,
      interrupts: 0,
      wait: dist,
      run: dist,
      cpu: dist,
      memory: { count: 0, sum: 0, max: 0 },
      hourly: { done: Array(24).fill(0), err: Array(24).fill(0) },
    });
    const prom = { buckets: PROM_BUCKETS.map(() => 0), sum: 0, count: 0 };
    expect(emptyTotals()).toEqual({
      created: 0,
      finished: { done: 0, relayed: 0, err: zeroOutcomes() },
      failures: {},
      retries: 0,
      resends: 0,
      interrupts: 0,
      wait: prom,
      run: prom,
      run_cpu: prom,
      run_memory: { buckets: MEMORY_BUCKETS.map(() => 0), sum: 0, count: 0 },
    });
  });

  it('a day and the totals read back from their JSON as they were written', () => {
    const day = emptyDay('20261125');
    for (const [i, k] of (
      ['created', 'started', 'done', 'relayed', 'err', 'failures', 'retries', 'resends', 'timeouts', 'stalls', 'ooms', 'interrupts'] as const
    ).entries())
      day[k] = i + 1;
    day.outcomes.expired = 4;
    for (const v of [0.5, 75, 4000, 90_000]) {
      observe(day.wait, v);
      observe(day.run, v / 2);
      observe(day.cpu, v / 4);
    }
    day.memory = { count: 2, sum: 300, max: 200 };
    day.hourly.done[3] = 7;
    day.hourly.err[23] = 2;
    expect(reviveDay(roundTrip(day), '20261125')).toEqual(day);
    const totals = emptyTotals();
    totals.created = 9;
    totals.finished = { done: 5, relayed: 1, err: { ...zeroOutcomes(), fatal: 2 } };
    totals.failures = { timeout: 3, exit: 1 };
    Object.assign(totals, { retries: 4, resends: 2, interrupts: 1 });
    for (const v of [0.003, 2, 100_000]) {
      observeProm(totals.wait, v);
      observeProm(totals.run, v * 2);
      observeProm(totals.run_cpu, v / 2);
    }
    observeProm(totals.run_memory, 5 * 1024 * 1024, MEMORY_BUCKETS);
    expect(reviveTotals(roundTrip(totals))).toEqual(totals);
  });

  it('damaged fields count as zero or empty; a file that is no object is an empty record', () => {
    const bad = [-1, 'x', null, true, [3], { n: 1 }];
    for (const v of bad) {
      const day = reviveDay({ created: v, memory: { count: v, sum: v, max: v }, wait: { count: v, variance: v } }, 'd');
      expect([day.created, day.memory.count, day.memory.sum, day.memory.max, day.wait.count, day.wait.variance], JSON.stringify(v)).toEqual([0, 0, 0, 0, 0, 0]);
    }
    for (const v of [null, [], 'x', 3]) {
      expect(reviveDay(v, 'd')).toEqual(emptyDay('d'));
      expect(reviveTotals(v)).toEqual(emptyTotals());
    }
    const day = reviveDay({ outcomes: [1], wait: [1], memory: [1], hourly: { done: [1, -2, 'x'], err: Array(30).fill(1) } }, 'd');
    expect(day.outcomes).toEqual(zeroOutcomes());
    expect(day.wait).toEqual(emptyDay('d').wait);
    expect(day.memory).toEqual({ count: 0, sum: 0, max: 0 });
    expect(day.hourly).toEqual({ done: [1, 0, 0, ...Array(21).fill(0)], err: Array(24).fill(1) });
  });

  it('a distribution keeps what is sound: no finite mean is 0, no finite min or max is none, missing bins are empty ones', () => {
    const d = reviveDay({ run: { count: 2, mean: 'x', variance: 1, min: Infinity, max: 4, histogram: { m: [0, 2, -1] } } }, 'd').run;
    expect(d).toEqual({ count: 2, mean: 0, variance: 1, min: null, max: 4, histogram: { s: [0], m: [0, 2, 0], h: [0], d: [] } });
    expect(reviveDay({ run: { histogram: 'x', mean: NaN } }, 'd').run).toEqual(emptyDay('d').run);
  });

  it("a Prometheus histogram takes its bounds' buckets, and counts at least what they hold", () => {
    const t = reviveTotals({ wait: { buckets: [1, 2], sum: 3, count: 1 }, run: { buckets: Array(40).fill(1), count: 99 }, run_memory: { buckets: [5] } });
    expect(t.wait).toEqual({ buckets: [1, 2, ...Array(PROM_BUCKETS.length - 2).fill(0)], sum: 3, count: 3 });
    expect(t.run).toEqual({ buckets: Array(PROM_BUCKETS.length).fill(1), sum: 0, count: 99 });
    expect(t.run_memory).toEqual({ buckets: [5, ...Array(MEMORY_BUCKETS.length - 1).fill(0)], sum: 0, count: 5 });
    expect(reviveTotals({ finished: 'x', failures: { oom: 2, exit: -1 } })).toMatchObject({
      finished: { done: 0, relayed: 0, err: zeroOutcomes() },
      failures: { oom: 2, exit: 0 },
    });
  });
});
