// One distribution of durations in seconds, updated in O(1): Welford mean/variance, min/max, qless's histogram and Prometheus buckets.
import { type Distribution, PROM_BUCKETS, type PromHistogram } from '../../ipc/stats-reply.js';

export function emptyDistribution(): Distribution {
  return { count: 0, mean: 0, variance: 0, min: null, max: null, histogram: { s: [0], m: [0], h: [0], d: [] } };
}

export function emptyPromHistogram(bounds: readonly number[] = PROM_BUCKETS): PromHistogram {
  return { buckets: bounds.map(() => 0), sum: 0, count: 0 };
}

function bump(counts: number[], i: number): void {
  while (counts.length <= i) counts.push(0);
  counts[i]++;
}

/** qless's layout: the bin is the whole seconds under a minute, the whole minutes under an hour, and so on. */
function histogramBin(seconds: number): [keyof Distribution['histogram'], number] {
  if (seconds < 60) return ['s', Math.floor(seconds)];
  if (seconds < 3600) return ['m', Math.floor(seconds / 60)];
  if (seconds < 86400) return ['h', Math.floor(seconds / 3600)];
  return ['d', Math.floor(seconds / 86400)];
}

export function observe(d: Distribution, seconds: number): void {
  const x = Math.max(0, seconds);
  // Welford keeps the sum of squared deviations; `variance` stores it divided by count − 1 (the sample variance, as qless reports it).
  const m2 = d.variance * Math.max(0, d.count - 1);
  d.count++;
  const delta = x - d.mean;
  d.mean += delta / d.count;
  const m2Next = m2 + delta * (x - d.mean);
  d.variance = d.count > 1 ? m2Next / (d.count - 1) : 0;
  d.min = d.min === null ? x : Math.min(d.min, x);
  d.max = d.max === null ? x : Math.max(d.max, x);
  const [unit, i] = histogramBin(x);
  bump(d.histogram[unit], i);
}

export function observeProm(h: PromHistogram, value: number, bounds: readonly number[] = PROM_BUCKETS): void {
  const x = Math.max(0, value);
  h.count++;
  h.sum += x;
  const i = bounds.findIndex((bound) => x <= bound);
  if (i >= 0) h.buckets[i]++;
}

/** The value under which `q` (0–1) of the observations fall, read off the histogram to its bin's upper edge; null when it has none (a day past histogram_history_days keeps counts, not bins). */
export function quantile(d: Distribution, q: number): number | null {
  const binned = Object.values(d.histogram).reduce((n: number, bins: number[]) => n + bins.reduce((a, b) => a + b, 0), 0);
  if (binned === 0) return null;
  const rank = Math.max(1, Math.ceil(q * binned));
  let seen = 0;
  const units: [keyof Distribution['histogram'], number][] = [
    ['s', 1],
    ['m', 60],
    ['h', 3600],
    ['d', 86400],
  ];
  for (const [unit, width] of units) {
    const bins = d.histogram[unit];
    for (let i = 0; i < bins.length; i++) {
      seen += bins[i];
      if (seen >= rank) return Math.min((i + 1) * width, d.max ?? Infinity);
    }
  }
  return d.max;
}
