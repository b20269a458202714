// One scrape of GET /metrics (rq-beyond §B16): rq-mgr and every queue asked in parallel, each with its own short timeout, their families merged the way prom-client's AggregatorRegistry merges cluster workers.
import type { Logger } from 'pino';
import { EMPTY_LIMITS, type LimitsTable, loadLimits } from '../../config/limits-config.js';
import type { LimitKeyStatus, MgrClient, WorkerInfo } from '../../ipc/mgr-client.js';
import type { QueueClient } from '../../ipc/queue-client.js';
import { isValidQueueName } from '../../message/names.js';
import { limitFamilies } from './limit-families.js';
import type { MetricFamily } from './metric-family.js';
import { mgrFamilies } from './mgr-families.js';
import { fleetFamilies } from './fleet-families.js';
import { fleetLimitFamilies } from './fleet-limit-families.js';
import { queueFamilies, queueUp } from './queue-families.js';

/** Each process gets this long to answer (§B16); one that is stuck costs one scrape this much, not Prometheus's whole timeout. */
export const ASK_TIMEOUT_MS = 1000;

export interface ScrapeDeps {
  mgr: MgrClient;
  queue: (name: string) => QueueClient;
  /** The queue directories of the root: the queues to ask when rq-mgr does not say which it runs. */
  discover: () => Promise<string[]>;
  limitsFile: string;
  log: Logger;
  timeoutMs?: number;
}

/** The value of `p`, or undefined when it fails or takes longer than `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([p.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function limitsTable(file: string, log: Logger): Promise<LimitsTable> {
  try {
    return await loadLimits(file);
  } catch (err) {
    // rq-mgr keeps its previous table then too; the keys are still reported, each under its own name.
    log.warn({ err: (err as Error).message }, 'metrics: config/limits.json unreadable; limit keys reported without their globs');
    return EMPTY_LIMITS;
  }
}

async function queuePart(d: ScrapeDeps, name: string, ms: number): Promise<MetricFamily[]> {
  const a = await within(d.queue(name).metrics(), ms);
  if (a?.ok) return queueFamilies({ ...a.value, queue: name });
  if (a) d.log.debug({ queue: name, reply: a.text }, 'metrics: the queue refused metrics');
  return [queueUp(name, false)];
}

/** Every family of this scrape: rq-mgr's first, then each queue's in name order. */
export async function scrapeFamilies(d: ScrapeDeps): Promise<MetricFamily[]> {
  const ms = d.timeoutMs ?? ASK_TIMEOUT_MS;
  const [status, limits, table, fleet] = await Promise.all([
    within(d.mgr.status(ms), ms),
    within(d.mgr.limitStatus(undefined, ms), ms),
    limitsTable(d.limitsFile, d.log),
    within(d.mgr.fleet(ms), ms),
  ]);
  const workers: Record<string, WorkerInfo> | null = status?.ok ? status.value : null;
  const names = workers ? Object.keys(workers).filter(isValidQueueName).sort() : await d.discover();
  const parts = await Promise.all(names.map((n) => queuePart(d, n, ms)));
  const limitStatus: Record<string, LimitKeyStatus> | null = limits?.ok ? limits.value : null;
  return [
    ...mgrFamilies(workers, names),
    ...fleetFamilies(fleet?.ok ? fleet.value : null),
    ...limitFamilies(table, limitStatus),
    ...fleetLimitFamilies(table, limitStatus),
    ...parts.flat(),
  ];
}
