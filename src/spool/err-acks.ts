// Acknowledged errors (spec §9.7 ack_errs): err/<id> renamed to err/.<id>, hidden from counts, and back again for a requeue.
import path from 'node:path';
import { isErrno } from '../errors.js';
import type { QueueSpool } from './queue-spool.js';

/**
 * Acknowledges every err message: the ids acknowledged, and those whose rename failed with why (one
 * failure does not stop the others, nor hide them). One gone meanwhile is neither.
 */
export async function ackErrs(spool: QueueSpool): Promise<{ ids: string[]; failed: { id: string; err: unknown }[] }> {
  const dir = spool.paths.state.err;
  const ids: string[] = [];
  const failed: { id: string; err: unknown }[] = [];
  for (const id of await spool.listFlat('err')) {
    try {
      await spool.fs.rename(path.join(dir, id), path.join(dir, `.${id}`));
      ids.push(id);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) failed.push({ id, err });
    }
  }
  if (ids.length) await spool.dirSync.sync(dir);
  return { ids, failed };
}

/** One err message acknowledged (err/<id> → err/.<id>), durably; false when it is not an unacknowledged err message. */
export async function ackErr(spool: QueueSpool, id: string): Promise<boolean> {
  const dir = spool.paths.state.err;
  try {
    await spool.fs.rename(path.join(dir, id), path.join(dir, `.${id}`));
  } catch {
    return false;
  }
  await spool.dirSync.sync(dir);
  return true;
}

/** err/.<id> → err/<id>, durably (a requeue of an acknowledged message, rq-beyond §B6). */
export async function unackErr(spool: QueueSpool, id: string): Promise<void> {
  const dir = spool.paths.state.err;
  await spool.fs.rename(path.join(dir, `.${id}`), path.join(dir, id));
  await spool.dirSync.sync(dir);
}
