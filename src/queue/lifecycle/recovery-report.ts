// What the recovery scan at a queue's start found, said once in the log: an operator reads here what a crash left and what rq did with it.
import type { Logger } from 'pino';
import type { QueueSpool, Recovered } from '../../spool/queue-spool.js';
import type { QueueEvents } from '../status/queue-events.js';

export function reportRecovery(log: Logger, rec: Recovered): void {
  const j = rec.journal;
  if (j.recreated.length || j.rewritten.length) log.warn({ recreated: j.recreated, rewritten: j.rewritten }, 'acknowledged creates a crash had lost made again from the journal');
  if (j.damaged) log.warn({ lines: j.damaged }, 'journal lines torn by a crash skipped (their creators were never answered)');
  if (rec.requeued.length) log.info({ ids: rec.requeued }, 'interrupted messages returned to que');
  if (rec.purged.length) log.warn({ ids: rec.purged }, 'messages cancelled with purge before a crash removed');
  if (rec.broken.length) log.error({ ids: rec.broken }, 'messages with unreadable msg moved to err');
  if (rec.finished.length) log.warn({ ids: rec.finished }, 'messages whose outcome was decided before a crash moved to err');
}

/** A message the scan finished to err (its outcome was decided before the crash): observers (webhooks) hear of it as of a run's end. */
export async function announceFinished(spool: QueueSpool, events: QueueEvents, id: string): Promise<void> {
  const [msg, status] = await Promise.all([spool.readMessage('err', id).catch(() => null), spool.readStatus('err', id).catch(() => null)]);
  if (msg) events.emit('finished', { msg, outcome: { state: 'err', statusText: status?.job_status ?? null }, code: null, signal: null, ms: null });
}
