// A run whose end still waited for room or a file descriptor when its queue stopped: left where that end got to, for the next start, and said so; never failed as rq's own error.
import type { Logger } from 'pino';
import { markShutdown } from '../../spool/message-files.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { isNoDescriptor, isNoSpace } from '../status/disk-full.js';
import type { QueueEvents } from '../status/queue-events.js';

export interface StoppedShortDeps {
  spool: QueueSpool;
  events: QueueEvents;
  stopping: () => boolean;
  config: () => { max_interrupts?: number };
}

/**
 * Whether `err` ended run `id`'s end only because the queue stopped while one of its writes waited
 * for room or a descriptor (a waiting write gives up once the queue stops); if so, deals with it.
 * Still in run/, the message stays there as a run a shutdown cut short does: marked so where the
 * queue limits interrupts (if the disk takes that), and reported interrupted. Already moved on
 * (only the sync after its move was waiting), it is where its end put it, and the log says so.
 */
export async function stoppedShort(id: string, log: Logger, err: unknown, d: StoppedShortDeps): Promise<boolean> {
  const short = isNoSpace(err) ? 'a full disk' : isNoDescriptor(err) ? 'too few file descriptors' : null;
  if (!short || !d.stopping()) return false;
  const text = (err as Error).message;
  const where = await d.spool.locate(id);
  if (where !== 'run') {
    log.warn({ err: text, state: where }, `stopping with ${short}: the message has left run/ as its end said, the directory sync after that move not done`);
    return true;
  }
  const dir = d.spool.msgDir('run', id);
  if (d.config().max_interrupts !== undefined) await markShutdown(dir, d.spool.fs).catch(() => undefined);
  log.warn({ err: text }, `stopping with ${short}: message stays in run/`);
  d.events.emit('interrupted', { id });
  return true;
}
