// `rq stats` as `key: value` lines (rq-beyond §B15.3): the queue's reply flattened, with approximate p50/p95/p99 of wait and run read off their histograms.
import type { DayStats, Distribution } from '../ipc/stats-reply.js';
import { quantile } from '../queue/observers/distribution.js';

const QUANTILES: [string, number][] = [
  ['p50', 0.5],
  ['p95', 0.95],
  ['p99', 0.99],
];

/** Whole numbers as they are, others to 3 decimals (a mean of seconds to the millisecond); null as `none`. */
function shown(v: unknown): string {
  if (v === null || v === undefined) return 'none';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1000) / 1000);
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const isDistribution = (v: unknown): v is Distribution =>
  typeof v === 'object' && v !== null && typeof (v as Distribution).count === 'number' && typeof (v as Distribution).histogram === 'object';

function flatten(prefix: string, v: unknown, out: string[]): void {
  if (Array.isArray(v)) {
    out.push(`${prefix}: ${v.map(shown).join(',')}`);
    return;
  }
  if (typeof v !== 'object' || v === null) {
    out.push(`${prefix}: ${shown(v)}`);
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    // The qless bins are what the quantiles are read from; --json prints them.
    if (k === 'histogram') continue;
    flatten(prefix ? `${prefix}.${k}` : k, x, out);
  }
  if (isDistribution(v)) for (const [name, q] of QUANTILES) out.push(`${prefix}.${name}: ${shown(quantile(v, q))}`);
}

/**
 * One line per figure, in the reply's order: `created: 120`, `outcomes.failed: 1`, `wait.p95: 3`
 * (seconds, the upper edge of the histogram bin the 95th percentile falls in, at most `wait.max`),
 * `hourly.done: 0,0,4,…` (a list: by UTC hour; `live.per_minute`: the last 60 minutes, oldest first).
 */
export function statsLines(s: DayStats): string[] {
  const out: string[] = [];
  flatten('', s, out);
  return out;
}
