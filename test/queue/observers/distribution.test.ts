// One distribution in O(1) per value: Welford against the two-pass formulas, qless bins and Prometheus buckets against their definitions, quantiles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROM_BUCKETS } from '../../../src/ipc/stats-reply.js';
import { emptyDistribution, emptyPromHistogram, observe, observeProm, quantile } from '../../../src/queue/observers/distribution.js';

const seconds = fc.oneof(
  fc.double({ min: 0, max: 60, noNaN: true }),
  fc.double({ min: 0, max: 200_000, noNaN: true }),
  fc.constantFrom(0, 59.999, 60, 3599.5, 3600, 86399, 86400, 0.005, 86400 * 3),
);

describe('distribution', () => {
  it('mean, variance, min and max equal the two-pass formulas; every value lands in exactly one bin', () => {
    fc.assert(
      fc.property(fc.array(seconds, { minLength: 1, maxLength: 200 }), (values) => {
        const d = emptyDistribution();
        for (const v of values) observe(d, v);
        const mean = values.reduce((a, b) => a + b, 0) / values.length;
        const variance = values.length > 1 ? values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1) : 0;
        expect(d.count).toBe(values.length);
        expect(d.mean).toBeCloseTo(mean, 6);
        expect(Math.abs(d.variance - variance)).toBeLessThanOrEqual(1e-6 * Math.max(1, variance));
        expect(d.min).toBe(Math.min(...values));
        expect(d.max).toBe(Math.max(...values));
        const { s, m, h, d: days } = d.histogram;
        expect([...s, ...m, ...h, ...days].reduce((a, b) => a + b, 0)).toBe(values.length);
        expect(s.length).toBeLessThanOrEqual(60);
        expect(m.length).toBeLessThanOrEqual(60);
        expect(h.length).toBeLessThanOrEqual(24);
        expect(m[0] + h[0]).toBe(0);
      }),
    );
  });

  it('puts each value in qless’s bin: whole seconds under a minute, minutes under an hour, hours under a day, then days', () => {
    const d = emptyDistribution();
    for (const v of [0, 0.999, 1, 59.999, 60, 119.9, 3599, 3600, 86399, 86400, 86400 * 2.5]) observe(d, v);
    expect(d.histogram).toEqual({ s: [2, 1, ...Array(57).fill(0), 1], m: [0, 2, ...Array(57).fill(0), 1], h: [0, 1, ...Array(21).fill(0), 1], d: [0, 1, 1] });
  });

  it('starts with one empty bin of seconds, minutes and hours and no day bins, as qless answers an empty histogram', () => {
    expect(emptyDistribution()).toEqual({ count: 0, mean: 0, variance: 0, min: null, max: null, histogram: { s: [0], m: [0], h: [0], d: [] } });
  });

  it('a negative duration (a clock stepped back) counts as zero', () => {
    const d = emptyDistribution();
    observe(d, -3);
    expect(d).toMatchObject({ count: 1, min: 0, max: 0, histogram: { s: [1] } });
  });

  it('Prometheus buckets: each value in the first bucket whose bound is not below it, +Inf only in count', () => {
    fc.assert(
      fc.property(fc.array(seconds, { maxLength: 100 }), (values) => {
        const h = emptyPromHistogram();
        for (const v of values) observeProm(h, v);
        const expected = PROM_BUCKETS.map((b, i) => values.filter((v) => v <= b && (i === 0 || v > PROM_BUCKETS[i - 1])).length);
        expect(h.buckets).toEqual(expected);
        expect(h.count).toBe(values.length);
        expect(h.sum).toBeCloseTo(
          values.reduce((a, b) => a + b, 0),
          6,
        );
      }),
    );
  });

  it('quantiles read off the bins, to the upper edge of the bin, never past the largest value', () => {
    const d = emptyDistribution();
    expect(quantile(d, 0.5)).toBeNull();
    for (let i = 0; i < 90; i++) observe(d, 0.5);
    for (let i = 0; i < 9; i++) observe(d, 30.2);
    observe(d, 4000);
    expect(quantile(d, 0.5)).toBe(1);
    expect(quantile(d, 0.9)).toBe(1);
    expect(quantile(d, 0.95)).toBe(31);
    expect(quantile(d, 0.99)).toBe(31);
    expect(quantile(d, 1)).toBe(4000);
    // Past the bins of one unit into the next: the upper edge of the minute bin, not the largest value.
    const minutes = emptyDistribution();
    observe(minutes, 100);
    observe(minutes, 170);
    expect(quantile(minutes, 0.5)).toBe(120);
    // A day past histogram_history_days: counts without bins tell no quantile.
    expect(quantile({ ...d, histogram: { s: [0], m: [0], h: [0], d: [] } }, 0.5)).toBeNull();
  });
});
