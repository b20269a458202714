// A many-message operation that changed some messages and failed on others: one reply shape for every such command, typed once for the queue, the web and the CLI.
import { type ErrorCode, RqError, statusOf } from '../errors.js';

/** One message the operation did not change: its place in the batch (creates) or its id (the others), why, and the catalogue code of why. */
export interface PartialFailure {
  index?: number;
  id?: string;
  reason: string;
  /** Absent from an older queue's report: its status is then 500. */
  code?: ErrorCode;
}

/**
 * What a partial failure reports: how many messages were changed and how many were not, which
 * failed and why; a batch create also lists the ids it made, by their place in the batch.
 */
export interface PartialReport {
  total: number;
  done: number;
  failed: number;
  failures: PartialFailure[];
  /** Set when `failures` lists only the first of them (a requeue of a million errors on a full disk). */
  failures_cut?: true;
  ids?: { index: number; id: string }[];
}

/** Failures listed by a command over many messages; a batch create lists all of its (at most 10,000). */
export const MAX_FAILURES_LISTED = 1000;

/**
 * The reply when any message failed: `["fail", text, report]`. The text keeps the classic refusal
 * shape (`["fail", text]` readers see a refusal, never `ok`); the report says what was done.
 */
export function partialReply(verb: string, report: PartialReport): ['fail', string, PartialReport] {
  return ['fail', partialText(verb, report), report];
}

/** `2 of 5 messages were not created (messages[1]: create message failed: ENOSPC …; 1 more listed in failures)`. */
export function partialText(verb: string, r: PartialReport): string {
  const first = r.failures[0];
  const where = first === undefined ? '' : first.index !== undefined ? `messages[${first.index}]: ` : first.id !== undefined ? `${first.id}: ` : '';
  const more = r.failed > 1 ? `; ${r.failed - 1} more listed in failures` : '';
  return `${r.failed} of ${r.total} messages were not ${verb}${first ? ` (${where}${first.reason}${more})` : ''}`;
}

/** The report of a partial reply, or undefined for any other reply. */
export function partialOf(raw: unknown): PartialReport | undefined {
  if (!Array.isArray(raw) || raw[0] !== 'fail' || raw.length !== 3) return undefined;
  const r = raw[2] as PartialReport;
  return typeof r === 'object' && r !== null && typeof r.failed === 'number' && Array.isArray(r.failures) ? r : undefined;
}

/**
 * The HTTP status of a partial failure: that of its first failure's catalogue code (507 for a full
 * disk, 503 for a queue that could not allocate ids, 409 for a message in the wrong state), so a
 * client that checks the status alone never takes a partial failure for success; 500 when the
 * failure came without a code.
 */
export function partialStatus(r: PartialReport): number {
  const code = r.failures[0]?.code;
  const status = code ? statusOf(code) : 500;
  return status >= 400 ? status : 500;
}

/** Appends a failure, keeping at most `max` listed (the count goes on). */
export function addFailure(r: PartialReport, f: PartialFailure, max = MAX_FAILURES_LISTED): void {
  r.failed += 1;
  if (r.failures.length < max) r.failures.push(f);
  else r.failures_cut = true;
}

/**
 * Why one message failed and its code: an RqError's own, a vanished file as `msg not found`, any
 * other errno error as a disk failure (`<what> failed: ENOSPC: …`, 507), anything else internal.
 */
export function failureOf(err: unknown, what: string): { reason: string; code: ErrorCode } {
  const e = err instanceof RqError ? err : errorOf(err, what);
  return { reason: e.message, code: e.code };
}

function errorOf(err: unknown, what: string): RqError {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return RqError.of('RQ_ERR_NO_SUCH_MSG');
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code)) return RqError.of('RQ_ERR_DISK', what, e.message);
  // Not a catalogue text: the reason stays as thrown, the code says rq did not foresee it.
  return new RqError('RQ_ERR_INTERNAL', e instanceof Error ? e.message : String(err));
}
