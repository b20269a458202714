// What the queue's `stats`, `metrics` and `failed` commands answer (rq-beyond §B15, §B16): shared by the queue, the web and the CLI.

/** qless's histogram layout: per second under a minute, per minute under an hour, per hour under a day, per day (trailing zeros trimmed). */
export interface QlessHistogram {
  s: number[];
  m: number[];
  h: number[];
  d: number[];
}

/** One distribution of seconds (Welford mean and variance, qless `vk`). */
export interface Distribution {
  count: number;
  mean: number;
  variance: number;
  min: number | null;
  max: number | null;
  histogram: QlessHistogram;
}

export const OUTCOMES = ['failed', 'exhausted', 'fatal', 'expired', 'cancelled', 'dependency_failed', 'interrupted'] as const;
export type OutcomeName = (typeof OUTCOMES)[number];

/** Counters kept per UTC day. */
export interface DayCounters {
  created: number;
  started: number;
  done: number;
  relayed: number;
  err: number;
  outcomes: Record<OutcomeName, number>;
  failures: number;
  retries: number;
  resends: number;
  timeouts: number;
  stalls: number;
  /** Runs the kernel killed at their memory_max. */
  ooms: number;
  interrupts: number;
}

export interface LiveStats {
  counts: Record<'prep' | 'que' | 'run' | 'done' | 'relayed' | 'err' | 'err_acked', number>;
  que: Record<'delayed' | 'ready' | 'dependencies' | 'limit' | 'coalesced', number>;
  /** Age of the oldest ready message in seconds, 0 when none is ready. */
  oldest_ready_s: number;
  /** Index 59 is the current minute, 0 the minute an hour ago. */
  per_minute: { done: number[]; err: number[] };
}

/** `stats {date?}` (§B15.3); `live` only for today. */
export interface DayStats extends DayCounters {
  queue: string;
  date: string;
  wait: Distribution;
  run: Distribution;
  /** CPU seconds (user + system) of each run whose usage is known. */
  cpu: Distribution;
  /** Peak memory of those runs, in bytes: how many, their sum and the largest. */
  memory: { count: number; sum: number; max: number };
  /** Index = UTC hour of the day. */
  hourly: { done: number[]; err: number[] };
  live?: LiveStats;
}

/** Prometheus bucket upper bounds in seconds (§B16); +Inf is implied by `count`. */
export const PROM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400] as const;
/** The bounds of a run's peak memory histogram, in bytes: 1 MiB to 64 GiB by fours. */
export const MEMORY_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16_384, 65_536].map((mib) => mib * 1024 * 1024);

/** A Prometheus histogram: `buckets[i]` counts observations ≤ PROM_BUCKETS[i] and > the bound before (not cumulative). */
export interface PromHistogram {
  buckets: number[];
  sum: number;
  count: number;
}

/** Cumulative counters since the queue was created (`stats/totals.json`). */
export interface Totals {
  created: number;
  /** Finished messages: `done`, `relayed`, and `err` by outcome (a classic failure counts as `failed`). */
  finished: { done: number; relayed: number; err: Record<OutcomeName, number> };
  /** Failed runs by kind (§B3.1). */
  failures: Record<string, number>;
  retries: number;
  resends: number;
  interrupts: number;
  wait: PromHistogram;
  run: PromHistogram;
  /** CPU seconds (user + system) of each run whose usage is known, in PROM_BUCKETS. */
  run_cpu: PromHistogram;
  /** Peak memory of each such run, in bytes, in MEMORY_BUCKETS. */
  run_memory: PromHistogram;
}

/** `metrics` (§B16): what one queue contributes to `GET /metrics`. */
export interface QueueMetrics {
  queue: string;
  status: string;
  live: Omit<LiveStats, 'per_minute'>;
  workers: number;
  running_scripts: number;
  totals: Totals;
}

/** `failed {}` (§B15.4). */
export interface FailureGroups {
  groups: Record<string, number>;
}

/** `failed {group, offset, limit}`: the group's err messages, newest first. */
export interface FailureGroupPage {
  group: string;
  total: number;
  messages: { msg_id: string; outcome: string; failure?: string; text?: string; at?: string }[];
}

/** `search`: the matching messages, newest first, with their short fields (values over 256 characters cut). */
export interface SearchPage {
  total: number;
  messages: {
    msg_id: string;
    state: string;
    acked?: true;
    fields: Record<string, string | number>;
    status?: string;
    ms?: number | null;
    runs?: number;
    total_ms?: number | null;
    finished?: number | null;
  }[];
  /** Asked not to wait: the index is still being read (this many messages so far); the page is empty. */
  building?: { read: number };
}
