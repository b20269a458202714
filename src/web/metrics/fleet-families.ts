// What the fleet contributes to GET /metrics: whether this host is a member of its fleet, and how many hosts are up in it.
import type { FleetView } from '../../ipc/fleet-reply.js';
import { type MetricFamily, family, sample } from './metric-family.js';

/** Nothing on a host without a fleet (or while rq-mgr does not answer): `view` is null then. */
export function fleetFamilies(view: FleetView | null): MetricFamily[] {
  if (!view) return [];
  const labels = { fleet: view.fleet, host: view.host };
  return [
    family('gauge', 'rq_fleet_member', "Whether this host's key is in etcd (1), or not: joining, etcd unreachable, or its name refused (0)", [
      sample(labels, view.member.state === 'member' ? 1 : 0),
    ]),
    family('gauge', 'rq_fleet_hosts', 'Hosts of the fleet that are up, as this host last saw etcd', [
      sample({ fleet: view.fleet }, view.hosts.filter((h) => h.state === 'up').length),
    ]),
  ];
}
