// What rq-mgr contributes to GET /metrics (rq-beyond §B16): whether it answered, and how often it restarted each queue process.
import type { WorkerInfo } from '../../ipc/mgr-client.js';
import { type MetricFamily, family, sample } from './metric-family.js';

/** `workers` is rq-mgr's status (queues by name; the web and timers as `[web]`, `[timers]`), null when it did not answer. */
export function mgrFamilies(workers: Record<string, WorkerInfo> | null, queues: readonly string[]): MetricFamily[] {
  const up = family('gauge', 'rq_up', 'Whether rq-mgr answered this scrape (1) or not (0)', [sample({}, workers === null ? 0 : 1)]);
  if (workers === null) return [up];
  const restarts = queues.filter((q) => workers[q] !== undefined).map((queue) => sample({ queue }, workers[queue].restarts));
  return [
    up,
    family(
      'counter',
      'rq_queue_process_restarts_total',
      'Restarts of the queue process by rq-mgr (after it died, or restart_queue) since rq-mgr started',
      restarts,
    ),
  ];
}
