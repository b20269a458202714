// The Prometheus text format (0.0.4) of a scrape's families, written by prom-client: AggregatorRegistry.aggregate builds a fresh Registry from them, as it does for cluster workers.
import type { MetricFamily } from './metric-family.js';

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

type PromClient = typeof import('prom-client');
let promClient: Promise<PromClient> | null = null;

/** Loaded at the first scrape: prom-client brings its default collectors and push gateway along (~100 ms of start-up every web process would pay). */
function client(): Promise<PromClient> {
  promClient ??= import('prom-client');
  return promClient;
}

/**
 * Families of the same name from several sources become one family (one HELP and TYPE, every
 * sample); the registry escapes label values and writes +Inf as the format wants.
 */
export async function exposition(families: MetricFamily[]): Promise<string> {
  const { AggregatorRegistry } = await client();
  // aggregate takes a list of registries' JSON: one "registry" holding every family is the same thing.
  // A family with no sample (no limit key known yet) would be a HELP and TYPE with nothing under them.
  return AggregatorRegistry.aggregate([families.filter((f) => f.values.length > 0)]).metrics();
}
