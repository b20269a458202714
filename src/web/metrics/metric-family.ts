// One metric family in the shape a prom-client metric's get() returns (and AggregatorRegistry merges), made from figures a process already counted.
import { PROM_BUCKETS, type PromHistogram } from '../../ipc/stats-reply.js';

export type Labels = Record<string, string>;

export interface Sample {
  value: number;
  labels: Labels;
  /** `<name>_bucket`, `_sum` or `_count` for a histogram's lines; absent for the family's own name. */
  metricName?: string;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  /** prom-client's cluster merge rule; every sample carries the label of its queue or key, so no two sources ever share one. */
  aggregator: 'sum';
  values: Sample[];
}

/** A figure from another process's JSON: a number there, else 0 (a counter must never read NaN). */
export const figure = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function family(type: MetricFamily['type'], name: string, help: string, values: Sample[]): MetricFamily {
  return { name, help, type, aggregator: 'sum', values };
}

export const sample = (labels: Labels, value: unknown): Sample => ({ labels, value: figure(value) });

/**
 * The exposition lines of a histogram kept as counts per bucket (not cumulative, aligned with
 * PROM_BUCKETS), its sum and its count: cumulative `le` buckets, `+Inf` = count. prom-client's
 * Histogram only learns by observe(); replaying counts as fake observations would lose the sum.
 */
export function histogramSamples(name: string, labels: Labels, h: PromHistogram | undefined, bounds: readonly number[] = PROM_BUCKETS): Sample[] {
  let below = 0;
  const out: Sample[] = bounds.map((le, i) => {
    below += figure(h?.buckets?.[i]);
    return { metricName: `${name}_bucket`, labels: { ...labels, le: String(le) }, value: below };
  });
  // Runs longer than the last bound are only in the count; a count short of the buckets (a torn file) must not make +Inf fall.
  const count = Math.max(figure(h?.count), below);
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
  out.push({ metricName: `${name}_sum`, labels, value: figure(h?.sum) });
  out.push({ metricName: `${name}_count`, labels, value: count });
  return out;
}
