// GET /healthz's report: rq-mgr and each queue's state, and whether the whole counts as healthy (healthy_states in config/config.json).
import { RqError } from '../errors.js';
import { mgrState } from './dashboard-data.js';
import { heldReason } from './queue-snapshot.js';
import { fleetStalls } from './fleet-stalls.js';
import { fleetAnswer } from './fleet-answer.js';
import type { WebContext } from './web-context.js';

/**
 * An operator's DOWN (the config/<q>.down file: the process answers and reports DOWN) is a decision,
 * not a fault, so it counts as healthy by default; a queue whose process does not answer is DOWN by
 * fault and never healthy, whatever the list says. Any status text a queue reports may be listed.
 */
export const DEFAULT_HEALTHY_STATES = ['UP', 'PAUSE', 'DOWN'];

export interface QueueHealth {
  /** What the queue reports (UP, PAUSE, DOWN, SCRIPTERROR, …), or DOWN when it does not answer. */
  status: string;
  healthy: boolean;
  /** Why a queue in SCRIPTERROR or DISK FULL runs no script. */
  reason?: string;
  /** Why a queue that does not answer is DOWN: its worker's state, the connection error. */
  fault?: string;
  /** Its messages wait for fleet slots that this host cannot take now (etcd does not answer): said, not counted as unhealthy. */
  fleet_limits?: string;
}

export interface HealthReport {
  status: 'ok' | 'fail';
  healthy_states: string[];
  mgr: { up: boolean; error?: string };
  queues: Record<string, QueueHealth>;
  /** What was checked, as before this report named each queue's state. */
  checked: string[];
  /** Each unhealthy part, with why. */
  failing: { name: string; error: string }[];
}

async function queueHealth(
  ctx: WebContext,
  name: string,
  worker: { status: string; last_exit: string | null } | undefined,
  healthy: ReadonlySet<string>,
): Promise<QueueHealth> {
  const workerText = worker ? `worker ${worker.status}${worker.last_exit ? `, last ${worker.last_exit}` : ''}` : '';
  // A BACKOFF or ERROR worker has no process to ask.
  if (worker && worker.status !== 'RUNNING') return { status: 'DOWN', healthy: false, fault: workerText };
  try {
    const r = await ctx.queue(name).status();
    if (!r.ok) throw RqError.of('RQ_ERR_PROTOCOL', `status answered ${JSON.stringify(r.raw).slice(0, 200)}`);
    const reason = await heldReason(ctx, name, r.value);
    return { status: r.value, healthy: healthy.has(r.value), ...(reason ? { reason } : {}) };
  } catch (err) {
    return { status: 'DOWN', healthy: false, fault: `${(err as Error).message}${workerText ? ` (${workerText})` : ''}` };
  }
}

/**
 * Why this host takes no part in its fleet when its name is refused (another rq holds it): a fault of
 * its setup, unlike etcd out of reach, which the host rides out serving everything else. Null otherwise.
 */
async function refusedInFleet(ctx: WebContext): Promise<string | null> {
  const a = await fleetAnswer(ctx).catch(() => null);
  if (!a?.ok || a.value.member.state !== 'refused') return null;
  const v = a.value;
  return `this host (${v.host} in fleet ${v.fleet}) is refused: ${v.member.reason ?? 'its name is held'}; it takes no part in the fleet (rq doctor says how to fix it)`;
}

export async function healthReport(ctx: WebContext): Promise<HealthReport> {
  const states = ctx.deps.config.healthy_states ?? DEFAULT_HEALTHY_STATES;
  const healthy = new Set(states);
  const { mgr, names, workers } = await mgrState(ctx);
  const failing: { name: string; error: string }[] = [];
  if (!mgr.up) failing.push({ name: 'rq-mgr', error: mgr.error ?? 'no reply' });
  const queues: Record<string, QueueHealth> = {};
  const checked = await Promise.all(names.map(async (n) => ((queues[n] = await queueHealth(ctx, n, workers[n], healthy)), `queue ${n}`)));
  // Both ask rq-mgr: asked together, so a fleet host's check costs one round trip, not two.
  const [stalls, refused] = mgr.up ? await Promise.all([fleetStalls(ctx), refusedInFleet(ctx)]) : [new Map<string, string>(), null];
  for (const [n, why] of stalls) if (queues[n]) queues[n].fleet_limits = why;
  if (refused) {
    checked.push('fleet');
    failing.push({ name: 'fleet', error: refused });
  }
  for (const n of names) {
    const q = queues[n];
    if (!q.healthy)
      failing.push({
        name: `queue ${n}`,
        error: q.fault ?? `status ${q.status} is not one of healthy_states (${states.join(', ')})${q.reason ? `: ${q.reason}` : ''}`,
      });
  }
  return {
    status: failing.length ? 'fail' : 'ok',
    healthy_states: states,
    mgr: { up: mgr.up, ...(mgr.error ? { error: mgr.error } : {}) },
    queues,
    checked: ['rq-mgr', ...checked],
    failing,
  };
}
