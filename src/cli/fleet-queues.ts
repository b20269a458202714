// `rq queues --fleet`: the queues of every host of the fleet, one line per host and queue, from this root's rq-mgr's view of etcd.
import type { FleetView, QueueFigures } from '../ipc/fleet-reply.js';
import { askFleet } from './fleet-ask.js';
import { printRefusal } from './json-output.js';
import type { RqIo } from './rq-command.js';
import { staleNote } from './rq-fleet.js';

type FleetQueueRow = { host: string; queue: string } & QueueFigures;

/** Every host's queues in the view's order of hosts, each host's by name (a gone host has none: `rq fleet` shows it). */
export function fleetQueueRows(v: FleetView): FleetQueueRow[] {
  return v.hosts.flatMap((h) =>
    Object.keys(h.queues)
      .sort()
      .map((queue) => ({ host: h.host, queue, ...h.queues[queue] })),
  );
}

/** `a/q1 UP ready 3 running 1 workers 2`. */
const rowLine = (r: FleetQueueRow): string => `${r.host}/${r.queue} ${r.status} ready ${r.ready} running ${r.running} workers ${r.workers}`;

/**
 * `ok <n>` then one line per host and queue (the JSON array of rows with --json); while etcd does not
 * answer, `fail <n>` over the last seen rows, the reason on stderr, exit 1. No fleet: the refusal, exit 1.
 */
export async function printFleetQueues(root: string, io: RqIo, json: boolean): Promise<number> {
  const a = await askFleet(root);
  if (!a.ok) return printRefusal(io, a, json);
  const rows = fleetQueueRows(a.value);
  const fresh = a.value.etcd.reachable;
  if (!fresh) io.stderr(`rq: ${staleNote(a.value)}`);
  if (json) io.stdout(JSON.stringify(rows));
  else for (const line of [`${fresh ? 'ok' : 'fail'} ${rows.length}`, ...rows.map(rowLine)]) io.stdout(line);
  return fresh ? 0 : 1;
}
