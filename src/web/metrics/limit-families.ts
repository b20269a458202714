// rq-mgr's concurrency-limit table as rq_limit_* gauges (rq-beyond §B16): a key from a glob of config/limits.json or from a template is reported under that pattern, so per-tenant keys do not each make a series.
import type { LimitsTable } from '../../config/limits-config.js';
import type { LimitKeyStatus } from '../../ipc/mgr-client.js';
import { type MetricFamily, family, figure, sample } from './metric-family.js';

interface PatternFigures {
  concurrency: number;
  inUse: number;
  waiting: number;
}

/**
 * The name a key is reported under: itself when exact in the file; else the first glob that matches
 * (the one that gives its concurrency); else the glob of the template it came from (`api:{param1}`
 * ⇒ `api:*`, rq-mgr's `pattern`); else itself.
 */
export function limitPattern(table: LimitsTable, key: string, templatePattern?: string): string {
  if (table.exact.has(key)) return key;
  return table.globs.find((g) => g.re.test(key))?.pattern ?? templatePattern ?? key;
}

/**
 * Every entry of config/limits.json (at 0 when idle, so a dashboard always has its line), then the
 * keys rq-mgr knows, added up by pattern. `status` is null when rq-mgr did not answer: then
 * nothing is reported, rather than idle figures that may be false.
 */
export function limitFamilies(table: LimitsTable, status: Record<string, LimitKeyStatus> | null): MetricFamily[] {
  if (status === null) return [];
  const byPattern = new Map<string, PatternFigures>();
  for (const [key, concurrency] of table.exact) byPattern.set(key, { concurrency, inUse: 0, waiting: 0 });
  for (const g of table.globs) if (!byPattern.has(g.pattern)) byPattern.set(g.pattern, { concurrency: g.concurrency, inUse: 0, waiting: 0 });
  for (const [key, s] of Object.entries(status)) {
    const pattern = limitPattern(table, key, typeof s.pattern === 'string' ? s.pattern : undefined);
    const f = byPattern.get(pattern) ?? { concurrency: 0, inUse: 0, waiting: 0 };
    // A glob's keys share its concurrency; max keeps the table's word when one key is still on an older one.
    f.concurrency = Math.max(f.concurrency, figure(s.concurrency));
    f.inUse += Array.isArray(s.holders) ? s.holders.length : 0;
    f.waiting += Array.isArray(s.waiting) ? s.waiting.length : 0;
    byPattern.set(pattern, f);
  }
  const each = (pick: (f: PatternFigures) => number) => [...byPattern].map(([key, f]) => sample({ key }, pick(f)));
  return [
    family(
      'gauge',
      'rq_limit_concurrency',
      'Slots of a concurrency-limit key (a glob: of each key it matches)',
      each((f) => f.concurrency),
    ),
    family(
      'gauge',
      'rq_limit_in_use',
      'Slots held now (a glob: over the keys it matches)',
      each((f) => f.inUse),
    ),
    family(
      'gauge',
      'rq_limit_waiting',
      'Messages waiting for a slot (a glob: over the keys it matches)',
      each((f) => f.waiting),
    ),
  ];
}
