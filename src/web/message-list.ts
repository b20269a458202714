// One page of a queue's message list (its `search` command with detail rows) and the per-state counts beside it, from the queue process or, when it is not running, its directories.
import { queuePaths } from '../config/paths.js';
import { idTime } from '../message/message-id.js';
import { type DirCounts, countStateDirs } from '../spool/dir-counts.js';
import type { Refusal } from '../ipc/answer.js';
import { type ListFilter, searchArgs } from './list-params.js';
import type { QueueSnapshot } from './queue-snapshot.js';
import type { WebContext } from './web-context.js';

/** One row as the table and messages.json show it. */
export interface ListRow {
  msg_id: string;
  state: string;
  acked: boolean;
  /** Epoch ms, from the id. */
  created: number | null;
  /** Epoch seconds. */
  due: number | null;
  /** The message's `count` field (the classic daemon's resend count). */
  count: number | null;
  /** The runs it had, from its history: what the queue page shows as ATTEMPTS, as the message page's timeline counts them. */
  attempts: number;
  param1: string | null;
  status: string;
  /** The last run's wall time (a running one's so far). */
  duration_ms: number | null;
  /** All its runs' wall time together (a running one's so far). */
  total_ms: number | null;
  finished: number | null;
}

export interface ListPage {
  total: number;
  rows: ListRow[];
  /** The queue is still reading its messages for the list (the first listing since it started): this many so far. */
  building?: number;
}

const num = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && v !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

/**
 * Runs from the history; a message whose history says none (rotated away, or written by the
 * classic daemon) falls back on its `failures`, plus the run that ended it in done or relayed.
 */
function attemptsOf(m: { state: string; fields: Record<string, string | number>; runs?: number }): number {
  if (m.runs) return m.runs;
  const failures = num(m.fields.failures) ?? 0;
  return failures + (m.state === 'done' || m.state === 'relayed' || m.state === 'run' ? 1 : 0);
}

/** The page `f` asks for; with `waitMs`, `building` once that long has passed in the queue's first read of its messages. */
export async function listPage(
  ctx: WebContext,
  q: string,
  f: ListFilter,
  waitMs?: number,
): Promise<{ ok: true; page: ListPage } | { ok: false; refusal: Refusal }> {
  const r = await ctx.queue(q).search({ ...searchArgs(f), detail: true, ...(waitMs === undefined ? {} : { wait_ms: waitMs }) });
  if (!r.ok) return { ok: false, refusal: r };
  const rows = r.value.messages.map((m): ListRow => ({
    msg_id: m.msg_id,
    state: m.state,
    acked: m.acked === true,
    created: idTime(m.msg_id),
    due: num(m.fields.due),
    count: num(m.fields.count),
    param1: m.fields.param1 === undefined ? null : String(m.fields.param1),
    status: m.status ?? m.state,
    duration_ms: m.ms ?? null,
    attempts: attemptsOf(m),
    total_ms: m.total_ms ?? m.ms ?? null,
    finished: m.finished ?? null,
  }));
  return { ok: true, page: { total: r.value.total, rows, ...(r.value.building ? { building: r.value.building.read } : {}) } };
}

export interface ListCounts {
  counts: DirCounts | null;
  /** Who counted: the queue process (any status, DOWN too), or its directories when the process does not answer. */
  source: 'queue' | 'directories' | null;
}

/**
 * Counts per state, acknowledged errors included. A running queue counts from memory (`metrics`
 * is answered while DOWN, where `num_messages` is refused as the classic daemon did); a queue
 * whose process does not answer is counted from its state directories, read-only.
 */
export async function listCounts(ctx: WebContext, q: string, snap: QueueSnapshot): Promise<ListCounts> {
  if (snap.alive) {
    const m = await ctx
      .queue(q)
      .metrics()
      .catch(() => null);
    if (m?.ok) return { counts: m.value.live.counts, source: 'queue' };
    return { counts: snap.counts ? { ...snap.counts, err_acked: 0 } : null, source: snap.counts ? 'queue' : null };
  }
  return { counts: await countStateDirs(queuePaths(ctx.deps.root, q).state), source: 'directories' };
}
