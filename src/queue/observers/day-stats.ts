// A queue's statistics record for one UTC day and its cumulative totals (rq-beyond §B15.1): empty values, and revival from a file that may be old or damaged.
import {
  type DayCounters,
  type DayStats,
  type Distribution,
  MEMORY_BUCKETS,
  OUTCOMES,
  type OutcomeName,
  type PromHistogram,
  type Totals,
} from '../../ipc/stats-reply.js';
import { emptyDistribution, emptyPromHistogram } from './distribution.js';

export type DayRecord = Omit<DayStats, 'queue' | 'live'>;

/** `YYYYMMDD` of an epoch-ms time, in UTC. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

export const zeroOutcomes = (): Record<OutcomeName, number> => Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<OutcomeName, number>;

function zeroCounters(): DayCounters {
  return {
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
  };
}

export function emptyDay(date: string): DayRecord {
  return {
    date,
    ...zeroCounters(),
    wait: emptyDistribution(),
    run: emptyDistribution(),
    cpu: emptyDistribution(),
    memory: { count: 0, sum: 0, max: 0 },
    hourly: { done: Array(24).fill(0), err: Array(24).fill(0) },
  };
}

export function emptyTotals(): Totals {
  return {
    created: 0,
    finished: { done: 0, relayed: 0, err: zeroOutcomes() },
    failures: {},
    retries: 0,
    resends: 0,
    interrupts: 0,
    wait: emptyPromHistogram(),
    run: emptyPromHistogram(),
    run_cpu: emptyPromHistogram(),
    run_memory: emptyPromHistogram(MEMORY_BUCKETS),
  };
}

type Json = Record<string, unknown>;
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
const counts = (v: unknown, length?: number): number[] => {
  const out = Array.isArray(v) ? v.map(count) : [];
  while (length !== undefined && out.length < length) out.push(0);
  return length === undefined ? out : out.slice(0, length);
};
const countMap = <K extends string>(v: unknown, base: Record<K, number>): Record<K, number> => {
  const out = { ...base };
  if (isJson(v)) for (const [k, n] of Object.entries(v)) out[k as K] = count(n);
  return out;
};

function reviveDistribution(v: unknown): Distribution {
  const d = emptyDistribution();
  if (!isJson(v)) return d;
  const h = isJson(v.histogram) ? v.histogram : {};
  const finite = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : null);
  return {
    count: count(v.count),
    mean: finite(v.mean) ?? 0,
    variance: count(v.variance),
    min: finite(v.min),
    max: finite(v.max),
    // A day older than histogram_history_days has lost its histogram (§B15.2): it reads as empty bins.
    histogram: { s: counts(h.s ?? [0]), m: counts(h.m ?? [0]), h: counts(h.h ?? [0]), d: counts(h.d) },
  };
}

/** A day record from its file's JSON: unknown or damaged fields count as zero (statistics are not state, §B15.2). */
export function reviveDay(v: unknown, date: string): DayRecord {
  const day = emptyDay(date);
  if (!isJson(v)) return day;
  for (const k of ['created', 'started', 'done', 'relayed', 'err', 'failures', 'retries', 'resends', 'timeouts', 'stalls', 'ooms', 'interrupts'] as const)
    day[k] = count(v[k]);
  day.outcomes = countMap(v.outcomes, zeroOutcomes());
  day.wait = reviveDistribution(v.wait);
  day.run = reviveDistribution(v.run);
  day.cpu = reviveDistribution(v.cpu);
  const memory = isJson(v.memory) ? v.memory : {};
  day.memory = { count: count(memory.count), sum: count(memory.sum), max: count(memory.max) };
  const hourly = isJson(v.hourly) ? v.hourly : {};
  day.hourly = { done: counts(hourly.done, 24), err: counts(hourly.err, 24) };
  return day;
}

function reviveProm(v: unknown, bounds?: readonly number[]): PromHistogram {
  const h = emptyPromHistogram(bounds);
  if (!isJson(v)) return h;
  const buckets = counts(v.buckets, h.buckets.length);
  return {
    buckets,
    sum: count(v.sum),
    count: Math.max(
      count(v.count),
      buckets.reduce((a, b) => a + b, 0),
    ),
  };
}

export function reviveTotals(v: unknown): Totals {
  const t = emptyTotals();
  if (!isJson(v)) return t;
  const finished = isJson(v.finished) ? v.finished : {};
  return {
    created: count(v.created),
    finished: { done: count(finished.done), relayed: count(finished.relayed), err: countMap(finished.err, zeroOutcomes()) },
    failures: countMap(v.failures, {} as Record<string, number>),
    retries: count(v.retries),
    resends: count(v.resends),
    interrupts: count(v.interrupts),
    wait: reviveProm(v.wait),
    run: reviveProm(v.run),
    run_cpu: reviveProm(v.run_cpu),
    run_memory: reviveProm(v.run_memory, MEMORY_BUCKETS),
  };
}
