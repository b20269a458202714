// The scan at queue start: rq's temp files removed, run/ back to que/, que/ loaded, unreadable or already decided messages to err/.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type Message, cancelledStatus } from '../message/message.js';
import { errText } from './create.js';
import { type Replayed, replayJournal } from './journal-replay.js';
import { mapLimit } from './map-limit.js';
import { cleanTemps, readCancelMarker } from './message-files.js';
import type { QueueSpool } from './queue-spool.js';

export interface Recovered {
  prep: string[];
  que: Message[];
  /** Ids that were in run/ and went back to que/. */
  requeued: string[];
  /** Ids whose msg could not be read; moved to err/ with a status saying why. */
  broken: string[];
  /** Ids whose msg already had an `outcome`: a finish to err cut short by a crash, completed (rq-beyond §B1.3). */
  finished: string[];
  /** Ids cancelled with `purge` before the crash: removed now, as the cancel would have (rq-beyond §B5). */
  purged: string[];
  /** What the create journal held (creates whose dirs a crash may have lost), and what was repaired. */
  journal: Replayed;
}

const RECOVERY_LANES = 32;

export interface RecoverOptions {
  /** rq-beyond §B13: a message interrupted by crashes more often than this ends in err `interrupted`. */
  maxInterrupts?: number;
}

/**
 * `beforeRequeue` runs for each message found in run/ (the queue kills a script left by its
 * previous incarnation there). Derived fields on disk are never trusted.
 */
export async function recoverSpool(
  spool: QueueSpool,
  beforeRequeue?: (id: string, dir: string) => Promise<void>,
  opts: RecoverOptions = {},
): Promise<Recovered> {
  await spool.ensureDirs();
  const { paths, fs: sfs } = spool;
  // First: the rest of the scan must see every acknowledged create in its place.
  const journal = await replayJournal(spool);
  const out: Recovered = { prep: [], que: [], requeued: [], broken: [], finished: [], purged: [], journal };
  for (const n of await fsp.readdir(paths.state.prep)) {
    if (n.startsWith('_')) await sfs.rm(path.join(paths.state.prep, n), { recursive: true, force: true });
  }
  await sfs.rm(path.join(spool.paths.dir, '.blank'), { recursive: true, force: true });
  // Deep queues hold 100k messages: the per-message work runs RECOVERY_LANES at a time.
  for (const s of ['prep', 'run', 'err'] as const) {
    await mapLimit(await spool.listFlat(s), RECOVERY_LANES, (id) => cleanTemps(spool.msgDir(s, id), sfs));
  }
  for (const id of await spool.listFlat('run')) {
    const dir = spool.msgDir('run', id);
    if (beforeRequeue) await beforeRequeue(id, dir);
    await sfs.rm(path.join(dir, 'pid'), { force: true });
    const cancel = await readCancelMarker(dir);
    if (cancel && isPurge(cancel)) {
      await spool.remove('run', id);
      out.purged.push(id);
      continue;
    }
    if (cancel) {
      await finishCancelled(spool, id, cancel);
      out.finished.push(id);
      continue;
    }
    if (opts.maxInterrupts !== undefined && (await countCrash(spool, id, opts.maxInterrupts))) {
      out.finished.push(id);
      continue;
    }
    await spool.move(id, 'run', 'que', { actor: 'recovery', reason: 'interrupted' });
    out.requeued.push(id);
  }
  out.prep = [];
  for (const id of (await spool.listFlat('prep')).sort().reverse()) {
    const msg = await spool.readMessage('prep', id).catch(() => null);
    if (typeof msg?.outcome === 'string' && isPurge(msg.cancel)) {
      await spool.remove('prep', id);
      out.purged.push(id);
    } else if (typeof msg?.outcome === 'string') {
      await spool.move(id, 'prep', 'err', { actor: 'recovery', reason: 'outcome decided before a crash' });
      out.finished.push(id);
    } else out.prep.push(id);
  }
  const loaded = await mapLimit((await spool.listFlat('que')).sort(), RECOVERY_LANES, async (id) => {
    await cleanTemps(spool.msgDir('que', id), sfs);
    try {
      const msg = await spool.readMessage('que', id);
      msg.msg_id = id;
      if (typeof msg.due !== 'number') {
        const due = Number(msg.due);
        msg.due = Number.isFinite(due) ? due : Math.floor(spool.now() / 1000);
        await spool.writeMessage('que', id, msg);
      }
      if (typeof msg.outcome === 'string' && isPurge(msg.cancel)) {
        await spool.remove('que', id);
        out.purged.push(id);
        return null;
      }
      if (typeof msg.outcome === 'string') {
        await spool.move(id, 'que', 'err', { actor: 'recovery', reason: `outcome ${msg.outcome} decided before a crash` });
        out.finished.push(id);
        return null;
      }
      return msg;
    } catch (err) {
      await spool.writeStatus(spool.msgDir('que', id), `unreadable msg at recovery: ${errText(err)}`, true);
      await spool.move(id, 'que', 'err', { actor: 'recovery', reason: 'unreadable msg' });
      out.broken.push(id);
      return null;
    }
  });
  for (const m of loaded) if (m) out.que.push(m);
  return out;
}

/** Finish to err from run/ at load (rq-beyond §B1.3): status, then `msg` with `outcome`, then the rename. */
async function finishAtLoad(spool: QueueSpool, id: string, status: string, fields: Partial<Message> & { outcome: string }): Promise<void> {
  await spool.writeStatus(spool.msgDir('run', id), status, true);
  // An unreadable msg cannot record the outcome; the message still ends in err, as it would at load.
  const msg = await spool.readMessage('run', id).catch(() => null);
  if (msg) await spool.writeMessage('run', id, { ...msg, ...fields });
  await spool.move(id, 'run', 'err', { actor: 'recovery', details: { outcome: fields.outcome }, reason: status });
}

/** A run cancelled before the crash (its `cancel` marker is durable): finished to err `cancelled`, not run again. */
async function finishCancelled(spool: QueueSpool, id: string, cancel: Record<string, unknown>): Promise<void> {
  const status = cancelledStatus(typeof cancel.reason === 'string' ? cancel.reason : 'cancelled');
  await finishAtLoad(spool, id, status, { outcome: 'cancelled', cancel });
}

/** A cancel with `purge` (its marker, or `msg.cancel` once written) that a crash stopped short of the removal. */
function isPurge(cancel: unknown): boolean {
  return (cancel as { purge?: unknown } | undefined)?.purge === true;
}

/**
 * A run without a `shutdown` mark was cut short by a crash: its `interrupts` count grows (never its
 * `failures`). True when that exceeds `maxInterrupts` and the message was finished to err instead.
 */
async function countCrash(spool: QueueSpool, id: string, maxInterrupts: number): Promise<boolean> {
  const dir = spool.msgDir('run', id);
  const mark = path.join(dir, 'shutdown');
  if (
    await fsp.stat(mark).then(
      () => true,
      () => false,
    )
  ) {
    await spool.fs.rm(mark, { force: true });
    return false;
  }
  const msg = await spool.readMessage('run', id).catch(() => null);
  // Unreadable (err at load), or its end was already decided (finished at load): not a crash loop.
  if (!msg || typeof msg.outcome === 'string') return false;
  const interrupts = (Number(msg.interrupts) || 0) + 1;
  if (interrupts > maxInterrupts) {
    await finishAtLoad(spool, id, `INTERRUPTED ${interrupts} TIMES - max_interrupts is ${maxInterrupts}`, { interrupts, outcome: 'interrupted' });
    return true;
  }
  await spool.writeMessage('run', id, { ...msg, interrupts });
  return false;
}
