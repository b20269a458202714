// What the statistics routes derive from a stats reply: the qless bins in order, quantiles (none for a day whose bins are gone), where marks go, the throughput series' times.
import { describe, expect, it } from 'vitest';
import type { DayStats } from '../../src/ipc/stats-reply.js';
import { emptyDistribution, observe, quantile } from '../../src/queue/observers/distribution.js';
import { emptyDay } from '../../src/queue/observers/day-stats.js';
import { binOf, histogramBins, histogramChart, hourlyChart, perMinuteChart, quantiles } from '../../src/web/stats-series.js';
import { seconds } from '../../src/web/views/stats-charts-view.js';

const dist = (...xs: number[]) => {
  const d = emptyDistribution();
  for (const x of xs) observe(d, x);
  return d;
};

describe('histogram bins', () => {
  it('run from 0 s through seconds, minutes, hours and days to the last non-empty bin', () => {
    const bins = histogramBins(dist(0.2, 0.7, 3.5, 61, 7200, 90000));
    expect(bins.length).toBe(60 + 59 + 23 + 1);
    expect(bins[0]).toEqual({ label: '0s', from: 0, to: 1, count: 2 });
    expect(bins[3]).toEqual({ label: '3s', from: 3, to: 4, count: 1 });
    expect(bins[60]).toEqual({ label: '1m', from: 60, to: 120, count: 1 });
    expect(bins[60 + 59 + 1]).toEqual({ label: '2h', from: 7200, to: 10800, count: 1 });
    expect(bins.at(-1)).toEqual({ label: '1d', from: 86400, to: 172800, count: 1 });
    expect(histogramBins(emptyDistribution())).toEqual([]);
    expect(histogramBins(dist(2.5)).map((b) => b.label)).toEqual(['0s', '1s', '2s']);
  });

  it('mark each quantile on the bin holding it, as quantile() reads it', () => {
    const d = dist(0.1, 0.2, 0.3, 0.4, 5.5, 130);
    const q = quantiles(d);
    expect(q).toEqual({ p50: quantile(d, 0.5), p95: quantile(d, 0.95), p99: quantile(d, 0.99) });
    const bins = histogramBins(d);
    expect(bins[binOf(bins, q.p50!)].label).toBe('0s');
    expect(bins[binOf(bins, q.p99!)].label).toBe('2m');
    expect(histogramChart('run', d).marks).toEqual([
      { label: 'p50', x: 0 },
      { label: 'p95', x: binOf(bins, q.p95!) },
      { label: 'p99', x: binOf(bins, q.p99!) },
    ]);
  });

  it('give no quantiles for no observations, nor for a day whose bins were pruned', () => {
    expect(quantiles(emptyDistribution())).toEqual({ p50: null, p95: null, p99: null });
    const pruned = { ...dist(3, 3), histogram: { s: [], m: [], h: [], d: [] } };
    expect(quantiles(pruned)).toEqual({ p50: null, p95: null, p99: null });
    expect(histogramChart('wait', pruned).marks).toEqual([]);
  });
});

describe('throughput series', () => {
  const now = Date.UTC(2026, 10, 21, 16, 43, 46);

  it('per minute: index 59 is the minute now is in, each x a minute earlier', () => {
    const done = Array.from({ length: 60 }, (_, i) => i);
    const c = perMinuteChart({ counts: {} as never, que: {} as never, oldest_ready_s: 0, per_minute: { done, err: Array(60).fill(0) } }, now);
    expect(c.x[59]).toBe(Date.UTC(2026, 10, 21, 16, 43) / 1000);
    expect(c.x[0]).toBe(Date.UTC(2026, 10, 21, 15, 44) / 1000);
    expect(c.series.map((s) => s.label)).toEqual(['done', 'err']);
  });

  it('per hour: today up to the current hour, another day all 24', () => {
    const day = { queue: 'q', ...emptyDay('20261121') } as DayStats;
    day.hourly.done[16] = 4;
    const today = hourlyChart(day, now);
    expect(today.x).toHaveLength(17);
    expect(today.x[16]).toBe(Date.UTC(2026, 10, 21, 16) / 1000);
    expect(today.series[0].values[16]).toBe(4);
    expect(hourlyChart(day, now + 86_400_000).x).toHaveLength(24);
  });
});

describe('seconds as text', () => {
  it('reads at a glance', () => {
    expect([null, 0, 0.0042, 1, 2.5, 12.34, 61, 3725, 90000].map(seconds)).toEqual([
      '-',
      '0 s',
      '0.004 s',
      '1 s',
      '2.5 s',
      '12.3 s',
      '1m 1s',
      '1h 2m',
      '1d 1h',
    ]);
  });
});
