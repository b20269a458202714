// The fleet-wide limits this host takes part in, for GET /metrics: the slots its runs hold and its messages wait for, and whether it can take any now, per key (a glob's keys added up under it).
import type { LimitsTable } from '../../config/limits-config.js';
import type { LimitKeyStatus } from '../../ipc/mgr-client.js';
import { limitPattern } from './limit-families.js';
import { type MetricFamily, family, sample } from './metric-family.js';

/** Only keys of `"scope": "fleet"` that this host holds or waits for; nothing while rq-mgr does not answer (`status` null). */
export function fleetLimitFamilies(table: LimitsTable, status: Record<string, LimitKeyStatus> | null): MetricFamily[] {
  const byKey = new Map<string, { held: number; waiting: number; stalled: boolean }>();
  for (const [key, s] of Object.entries(status ?? {})) {
    if (s.scope !== 'fleet') continue;
    const name = limitPattern(table, key, s.pattern);
    const f = byKey.get(name) ?? { held: 0, waiting: 0, stalled: false };
    f.held += s.holders.length;
    f.waiting += s.waiting.length;
    f.stalled ||= typeof s.stalled === 'string';
    byKey.set(name, f);
  }
  if (byKey.size === 0) return [];
  const each = (pick: (f: { held: number; waiting: number; stalled: boolean }) => number) => [...byKey].map(([key, f]) => sample({ key }, pick(f)));
  return [
    family(
      'gauge',
      'rq_fleet_limit_held',
      "Slots of a fleet-wide limit held by this host's runs",
      each((f) => f.held),
    ),
    family(
      'gauge',
      'rq_fleet_limit_waiting',
      "This host's messages waiting for a slot of a fleet-wide limit",
      each((f) => f.waiting),
    ),
    family(
      'gauge',
      'rq_fleet_limit_stalled',
      'Whether this host can take no slot of the key now (1: etcd does not answer, or no lease), or can (0)',
      each((f) => (f.stalled ? 1 : 0)),
    ),
  ];
}
