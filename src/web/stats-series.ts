// What the statistics routes derive from a queue's `stats` reply (rq-beyond §B15.3): p50/p95/p99, the qless histogram as labelled bins, the throughput series with their times.
import type { DayStats, Distribution, LiveStats } from '../ipc/stats-reply.js';
import { quantile } from '../queue/observers/distribution.js';

export const QUANTILES = [
  ['p50', 0.5],
  ['p95', 0.95],
  ['p99', 0.99],
] as const;
export type QuantileName = (typeof QUANTILES)[number][0];
export type Quantiles = Record<QuantileName, number | null>;

/** `GET /q/<q>/stats.json`: the queue's reply, each distribution with its approximate quantiles. */
export type StatsJson = Omit<DayStats, 'wait' | 'run'> & { wait: Distribution & Quantiles; run: Distribution & Quantiles };

/** One qless bin: durations in [from, to) seconds. */
export interface Bin {
  label: string;
  from: number;
  to: number;
  count: number;
}

/**
 * The histogram's layout in order of duration. Each array is only as long as its highest bin used, so
 * the bins are walked by the unit's full range (`end`; days have none); `first` skips the bin a
 * coarser unit never fills (m[0] is under a minute, so in s).
 */
const UNITS = [
  { key: 's', width: 1, first: 0, end: 60 },
  { key: 'm', width: 60, first: 1, end: 60 },
  { key: 'h', width: 3600, first: 1, end: 24 },
  { key: 'd', width: 86400, first: 1, end: Infinity },
] as const;

/** Every bin from 0 s up to the last non-empty one, empty ones included (none when the histogram is empty), and at least `atLeast`. */
export function histogramBins(d: Distribution, atLeast = 0): Bin[] {
  const all: Bin[] = [];
  for (const u of UNITS) {
    const counts = d.histogram[u.key] ?? [];
    const end = u.end === Infinity ? counts.length : u.end;
    for (let i = u.first; i < end; i++) all.push({ label: `${i}${u.key}`, from: i * u.width, to: (i + 1) * u.width, count: counts[i] ?? 0 });
  }
  let last = all.length - 1;
  while (last >= 0 && all[last].count === 0) last--;
  return all.slice(0, Math.max(last + 1, atLeast));
}

export function quantiles(d: Distribution): Quantiles {
  const binned = histogramBins(d).reduce((n, b) => n + b.count, 0);
  // A day older than histogram_history_days keeps its count but not its bins (§B15.2): quantile() would
  // then answer the maximum for every q, so such a day has no quantiles.
  const known = d.count > 0 && binned >= d.count;
  return Object.fromEntries(QUANTILES.map(([name, q]) => [name, known ? quantile(d, q) : null])) as Quantiles;
}

export function withQuantiles(day: DayStats): StatsJson {
  return { ...day, wait: { ...day.wait, ...quantiles(day.wait) }, run: { ...day.run, ...quantiles(day.run) } };
}

/** The bin a quantile falls in: quantile() answers a bin's upper edge, or the maximum, which lies inside its bin. */
export function binOf(bins: readonly Bin[], seconds: number): number {
  const i = bins.findIndex((b) => b.to >= seconds);
  return i < 0 ? bins.length - 1 : i;
}

/** What a chart draws: x values (epoch seconds, or bin indexes with their labels) and one or more series. */
export interface ChartData {
  kind: 'time' | 'bins';
  x: number[];
  labels?: string[];
  series: { label: string; values: number[] }[];
  /** Vertical marks (p50/p95/p99) at an x value. */
  marks?: { label: string; x: number }[];
}

/** `YYYYMMDD` ⇒ its first millisecond, UTC. */
export function dayStartMs(date: string): number {
  return Date.UTC(Number(date.slice(0, 4)), Number(date.slice(4, 6)) - 1, Number(date.slice(6, 8)));
}

/** Done and err per minute of the last hour; index 59 of the reply is the minute `nowMs` is in. */
export function perMinuteChart(live: LiveStats, nowMs: number): ChartData {
  const minute = Math.floor(nowMs / 60_000) * 60;
  return {
    kind: 'time',
    x: live.per_minute.done.map((_, i) => minute - (live.per_minute.done.length - 1 - i) * 60),
    series: [
      { label: 'done', values: live.per_minute.done },
      { label: 'err', values: live.per_minute.err },
    ],
  };
}

/** Done and err per UTC hour of the day; today's stops at the current hour (later ones have not happened). */
export function hourlyChart(day: DayStats, nowMs: number): ChartData {
  const start = dayStartMs(day.date);
  const hours = nowMs >= start && nowMs < start + 86_400_000 ? Math.floor((nowMs - start) / 3_600_000) + 1 : 24;
  return {
    kind: 'time',
    x: Array.from({ length: hours }, (_, h) => start / 1000 + h * 3600),
    series: [
      { label: 'done', values: day.hourly.done.slice(0, hours) },
      { label: 'err', values: day.hourly.err.slice(0, hours) },
    ],
  };
}

/** Bins a histogram chart shows even when only the first is used: a lone bar over the whole width reads as no scale at all. */
const CHART_BINS = 10;

/** A distribution as a bar per bin, its quantiles marked on the bins they fall in. */
export function histogramChart(label: string, d: Distribution): ChartData {
  const bins = histogramBins(d, CHART_BINS);
  const q = quantiles(d);
  const marks = QUANTILES.flatMap(([name]) => (q[name] === null || bins.length === 0 ? [] : [{ label: name, x: binOf(bins, q[name]) }]));
  return { kind: 'bins', x: bins.map((_, i) => i), labels: bins.map((b) => b.label), series: [{ label, values: bins.map((b) => b.count) }], marks };
}
