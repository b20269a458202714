// What one queue contributes to GET /metrics (rq-beyond §B16): its `metrics` reply as metric families, or only rq_queue_up 0 when it did not answer.
import { MEMORY_BUCKETS, OUTCOMES, type LiveStats, type QueueMetrics } from '../../ipc/stats-reply.js';
import { type MetricFamily, family, histogramSamples, sample } from './metric-family.js';

const STATUSES = ['UP', 'PAUSE', 'DOWN', 'SCRIPTERROR', 'DISK FULL'];
const STATES: (keyof LiveStats['counts'])[] = ['prep', 'que', 'run', 'done', 'relayed', 'err', 'err_acked'];
const REASONS: (keyof LiveStats['que'])[] = ['delayed', 'ready', 'dependencies', 'limit', 'coalesced'];
/** §B3.1: each kind has a series from the start, so a rate() sees its first failure. */
const FAILURE_KINDS = ['err', 'exit', 'retry', 'timeout', 'stalled', 'destroyed', 'oom', 'spawn', 'internal'];

export function queueUp(queue: string, up: boolean): MetricFamily {
  return family('gauge', 'rq_queue_up', 'Whether the queue process answered this scrape (1) or not (0)', [sample({ queue }, up ? 1 : 0)]);
}

export function queueFamilies(m: QueueMetrics): MetricFamily[] {
  const queue = m.queue;
  const q = { queue };
  const { live, totals } = m;
  const statuses = STATUSES.includes(m.status) ? STATUSES : [...STATUSES, m.status];
  const kinds = [...FAILURE_KINDS, ...Object.keys(totals.failures ?? {}).filter((k) => !FAILURE_KINDS.includes(k))];
  const finished = [
    sample({ queue, state: 'done', outcome: '' }, totals.finished?.done),
    sample({ queue, state: 'relayed', outcome: '' }, totals.finished?.relayed),
    ...OUTCOMES.map((outcome) => sample({ queue, state: 'err', outcome }, totals.finished?.err?.[outcome])),
  ];
  return [
    queueUp(queue, true),
    family(
      'gauge',
      'rq_queue_status',
      "The queue's admin status: 1 for the current one",
      statuses.map((status) => sample({ queue, status }, status === m.status ? 1 : 0)),
    ),
    family(
      'gauge',
      'rq_queue_messages',
      'Messages in each state (err_acked: acknowledged err messages)',
      STATES.map((state) => sample({ queue, state }, live.counts?.[state])),
    ),
    family(
      'gauge',
      'rq_queue_waiting_messages',
      'Queued messages by what they wait for (ready: a free worker only)',
      REASONS.map((reason) => sample({ queue, reason }, live.que?.[reason])),
    ),
    family('gauge', 'rq_queue_oldest_ready_seconds', 'Age of the oldest ready message, 0 when none is ready', [sample(q, live.oldest_ready_s)]),
    family('gauge', 'rq_queue_workers', 'Worker slots of the queue (num_workers)', [sample(q, m.workers)]),
    family('gauge', 'rq_queue_running_scripts', 'Scripts running now', [sample(q, m.running_scripts)]),
    family('counter', 'rq_messages_created_total', 'Messages created since the queue was created', [sample(q, totals.created)]),
    family('counter', 'rq_messages_finished_total', 'Messages finished, by final state and (err) outcome', finished),
    family(
      'counter',
      'rq_message_failures_total',
      'Failed runs by failure kind, retried or not',
      kinds.map((kind) => sample({ queue, kind }, totals.failures?.[kind])),
    ),
    family('counter', 'rq_message_retries_total', 'Failed runs sent back to the que for another attempt', [sample(q, totals.retries)]),
    family('counter', 'rq_message_resends_total', 'Runs that ended in resend', [sample(q, totals.resends)]),
    family('counter', 'rq_message_interrupts_total', 'Runs interrupted by a crash of the queue process and queued again', [sample(q, totals.interrupts)]),
    family(
      'histogram',
      'rq_message_wait_seconds',
      "From a message's due (or its entry into the que) to the start of its run",
      histogramSamples('rq_message_wait_seconds', q, totals.wait),
    ),
    family('histogram', 'rq_message_run_seconds', 'Wall time of a run, from its start to its exit', histogramSamples('rq_message_run_seconds', q, totals.run)),
    family('histogram', 'rq_run_cpu_seconds', 'CPU time (user + system) a run used', histogramSamples('rq_run_cpu_seconds', q, totals.run_cpu)),
    family(
      'histogram',
      'rq_run_memory_peak_bytes',
      'Peak memory of a run (its cgroup with limits, else its largest process)',
      histogramSamples('rq_run_memory_peak_bytes', q, totals.run_memory, MEMORY_BUCKETS),
    ),
  ];
}
