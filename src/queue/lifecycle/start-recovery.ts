// The recovery scan at a queue's start: scripts a crashed predecessor left are killed, and what the crash left is said once in the log.
import type { Logger } from 'pino';
import type { FinishedState } from '../../message/states.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { type Recovered, recoverSpool } from '../../spool/recovery.js';
import { killStaleScript } from '../launch/stale-scripts.js';
import type { QueueEvents } from '../status/queue-events.js';

/** Runs the spool's recovery scan (spec §3.8, rq-beyond §B17), then tells the log and the observers what it did. */
export async function recoverQueue(spool: QueueSpool, events: QueueEvents, log: Logger, maxInterrupts: number | undefined): Promise<Recovered> {
  const killStale = async (id: string, dir: string) => {
    const killed = await killStaleScript(dir, id);
    if (killed.length) log.warn({ msg_id: id, pids: killed }, 'killed script left by a previous queue process');
  };
  const rec = await recoverSpool(spool, killStale, { maxInterrupts });
  reportRecovery(log, rec);
  // Finished by the scan rather than by a run: observers (webhooks) still hear of each one.
  for (const id of rec.finished) void announceFinished(spool, events, id);
  return rec;
}

/** How many messages each finished state holds on disk. */
export async function finishedCounts(spool: QueueSpool): Promise<Record<FinishedState, number>> {
  return { done: await spool.count('done'), relayed: await spool.count('relayed'), err: await spool.count('err') };
}

/** What the scan found, said once: an operator reads here what a crash left and what rq did with it. */
function reportRecovery(log: Logger, rec: Recovered): void {
  const j = rec.journal;
  if (j.recreated.length || j.rewritten.length)
    log.warn({ recreated: j.recreated, rewritten: j.rewritten }, 'acknowledged creates a crash had lost made again from the journal');
  if (j.damaged) log.warn({ lines: j.damaged }, 'journal lines torn by a crash skipped (their creators were never answered)');
  if (rec.requeued.length) log.info({ ids: rec.requeued }, 'interrupted messages returned to que');
  if (rec.purged.length) log.warn({ ids: rec.purged }, 'messages cancelled with purge before a crash removed');
  if (rec.broken.length) log.error({ ids: rec.broken }, 'messages with unreadable msg moved to err');
  if (rec.finished.length) log.warn({ ids: rec.finished }, 'messages whose outcome was decided before a crash moved to err');
}

/** A message the scan finished to err (its outcome was decided before the crash): observers hear of it as of a run's end. */
async function announceFinished(spool: QueueSpool, events: QueueEvents, id: string): Promise<void> {
  const [msg, status] = await Promise.all([spool.readMessage('err', id).catch(() => null), spool.readStatus('err', id).catch(() => null)]);
  if (msg) events.emit('finished', { msg, outcome: { state: 'err', statusText: status?.job_status ?? null }, code: null, signal: null, ms: null });
}
