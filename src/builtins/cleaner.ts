// The cleaner's work (spec §12.1): old done/relayed messages, old acknowledged errors, abandoned prep drafts, old trash entries, relay's relayed trimmed.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { queuePaths, rootPaths } from '../config/paths.js';
import { hashList, hashPath } from '../spool/hash-dir.js';
import { mapLimit } from '../spool/map-limit.js';
import { idTime } from '../message/message-id.js';
import { isValidQueueName } from '../message/names.js';
import { oldHashIds, removeEmptyDirs } from './hash-age.js';

/** relay/relayed keeps at most this many messages, whatever their age (classic). */
export const RELAYED_KEEP = 60_000;

/** A prep draft is kept at least this long whatever the days to keep: a client or a relay may be between its prep and its commit. */
export const DRAFT_MIN_AGE_MS = 86_400_000;

/** Deletes in flight per queue: enough for the queue to group-commit their fsyncs. */
const DELETE_CONCURRENCY = 8;

/** How a queue answered `delete_message`: deleted, already gone, refused because DOWN, or another failure. */
export type DeleteResult = 'deleted' | 'gone' | 'down' | 'failed';

export interface QueueAccess {
  /** 'up' (its process answers and is not DOWN), 'down', or 'none' (no process answers). */
  state(queue: string): Promise<'up' | 'down' | 'none'>;
  /** Asks the queue process to delete a message (the queue is the only writer of its dirs). */
  deleteMessage(queue: string, id: string): Promise<DeleteResult>;
}

export interface CleanerDeps {
  root: string;
  queues: QueueAccess;
  now: () => number;
  progress: (text: string) => void;
  log: (text: string) => void;
}

export interface QueueReport {
  queue: string;
  done: number;
  relayed: number;
  errAcked: number;
  /** Prep drafts never committed (a relay's copy that another host took, a prepmesg left): rq's own addition to the classic cleaner. */
  prep: number;
  failed: number;
  skipped?: string;
}

export interface CleanReport {
  days: number;
  queues: QueueReport[];
  trash: number;
  relayTrimmed: number;
}

const emptyReport = (queue: string): QueueReport => ({ queue, done: 0, relayed: 0, errAcked: 0, prep: 0, failed: 0 });

/**
 * Removes messages through the queue's own process when it runs, so its counts stay right and
 * nothing races its moves; a queue with no process is cleaned on disk (its counts are rebuilt
 * when it starts). A DOWN queue is left alone.
 */
async function removeIds(
  deps: CleanerDeps,
  queue: string,
  access: 'up' | 'none',
  state: 'done' | 'relayed' | 'err' | 'prep',
  ids: string[],
  report: QueueReport,
): Promise<void> {
  const key = state === 'err' ? 'errAcked' : state;
  const qp = queuePaths(deps.root, queue);
  await mapLimit(ids, DELETE_CONCURRENCY, async (id) => {
    let r: DeleteResult;
    if (access === 'up') {
      r = await deps.queues.deleteMessage(queue, id);
    } else {
      const dir = state === 'err' || state === 'prep' ? path.join(qp.state[state], id) : hashPath(qp.state[state], id);
      if (dir === null) return;
      r = await fsp.rm(dir, { recursive: true }).then(
        () => 'deleted' as const,
        (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 'gone' : 'failed'),
      );
    }
    if (r === 'deleted') report[key]++;
    else if (r === 'failed' || r === 'down') report.failed++;
  });
}

export async function cleanQueue(deps: CleanerDeps, queue: string, cutoffMs: number): Promise<QueueReport> {
  const report = emptyReport(queue);
  const access = await deps.queues.state(queue);
  if (access === 'down') {
    report.skipped = 'queue is DOWN';
    return report;
  }
  const qp = queuePaths(deps.root, queue);
  for (const state of ['done', 'relayed'] as const) {
    const old = await oldHashIds(qp.state[state], cutoffMs);
    await removeIds(deps, queue, access, state, old.ids, report);
    await removeEmptyDirs(old.dirs);
  }
  const acked = (await fsp.readdir(qp.state.err).catch(() => [] as string[])).filter((n) => {
    const t = n.startsWith('.') ? idTime(n) : null;
    return t !== null && t < cutoffMs;
  });
  await removeIds(deps, queue, access, 'err', acked, report);
  // Made before the cutoff (and a day ago at least) and never committed: nothing will. A create's private `_…` dirs are no ids.
  const draftCutoff = Math.min(cutoffMs, deps.now() - DRAFT_MIN_AGE_MS);
  const drafts = (await fsp.readdir(qp.state.prep).catch(() => [] as string[])).filter((n) => {
    const t = n.startsWith('.') ? null : idTime(n);
    return t !== null && t < draftCutoff;
  });
  await removeIds(deps, queue, access, 'prep', drafts, report);
  return report;
}

/** queues/.trash/<q>.<YYYYMMDD.HHMM.SS.mmm>: deleted queues, removed once older than the cutoff. */
export async function cleanTrash(deps: CleanerDeps, cutoffMs: number, only?: string): Promise<number> {
  const trash = rootPaths(deps.root).trash;
  let removed = 0;
  for (const entry of await fsp.readdir(trash).catch(() => [] as string[])) {
    const dot = entry.indexOf('.');
    if (dot <= 0 || (only !== undefined && entry.slice(0, dot) !== only)) continue;
    const t = idTime(entry.slice(dot + 1));
    if (t === null || t >= cutoffMs) continue;
    try {
      await fsp.rm(path.join(trash, entry), { recursive: true });
      removed++;
    } catch (err) {
      deps.log(`cannot remove trash entry ${entry}: ${(err as Error).message}`);
    }
  }
  return removed;
}

/** relay/relayed beyond the newest RELAYED_KEEP messages. */
export async function trimRelayed(deps: CleanerDeps, keep = RELAYED_KEEP): Promise<QueueReport> {
  const report = emptyReport('relay');
  const access = await deps.queues.state('relay');
  if (access === 'down') {
    report.skipped = 'queue is DOWN';
    return report;
  }
  const ids = (await hashList(queuePaths(deps.root, 'relay').state.relayed)).slice(keep);
  await removeIds(deps, 'relay', access, 'relayed', ids, report);
  return report;
}

/** The queue names to clean: every queue dir, or the one named. */
export async function queuesToClean(root: string, which: string): Promise<string[]> {
  if (which !== 'ALLQUEUES') return [which];
  const names = await fsp.readdir(rootPaths(root).queues).catch(() => [] as string[]);
  const out: string[] = [];
  for (const n of names.sort()) {
    if (!isValidQueueName(n)) continue;
    if ((await fsp.stat(path.join(rootPaths(root).queues, n)).catch(() => null))?.isDirectory()) out.push(n);
  }
  return out;
}

/** One run: every selected queue, the trash, then relay's relayed trimmed. */
export async function clean(deps: CleanerDeps, which: string, days: number): Promise<CleanReport> {
  const cutoffMs = deps.now() - days * 86_400_000;
  const report: CleanReport = { days, queues: [], trash: 0, relayTrimmed: 0 };
  for (const q of await queuesToClean(deps.root, which)) {
    const r = await cleanQueue(deps, q, cutoffMs);
    report.queues.push(r);
    deps.progress(
      r.skipped
        ? `${q}: skipped, ${r.skipped}`
        : `${q}: removed ${r.done} done, ${r.relayed} relayed, ${r.errAcked} acknowledged errors${r.prep ? `, ${r.prep} prep drafts` : ''}${r.failed ? `, ${r.failed} could not be removed` : ''}`,
    );
  }
  report.trash = await cleanTrash(deps, cutoffMs, which === 'ALLQUEUES' ? undefined : which);
  if (report.trash) deps.progress(`trash: removed ${report.trash} deleted queues`);
  if ((await fsp.stat(queuePaths(deps.root, 'relay').dir).catch(() => null))?.isDirectory()) {
    const t = await trimRelayed(deps);
    report.relayTrimmed = t.relayed;
    if (t.relayed) deps.progress(`relay: trimmed ${t.relayed} relayed messages beyond the newest ${RELAYED_KEEP}`);
  }
  return report;
}

/** The `done` text: one line with the totals. */
export function summary(r: CleanReport): string {
  const sum = (k: 'done' | 'relayed' | 'errAcked' | 'prep' | 'failed') => r.queues.reduce((n, q) => n + q[k], 0);
  const skipped = r.queues.filter((q) => q.skipped).map((q) => q.queue);
  return (
    `cleaned ${r.queues.length} queues keeping ${r.days} days: removed ${sum('done')} done, ${sum('relayed') + r.relayTrimmed} relayed, ` +
    `${sum('errAcked')} acknowledged errors, ${r.trash} trash entries` +
    (sum('prep') ? `, ${sum('prep')} prep drafts` : '') +
    (sum('failed') ? `; ${sum('failed')} could not be removed` : '') +
    (skipped.length ? `; skipped (DOWN): ${skipped.join(' ')}` : '')
  );
}
