// Where a failed run goes under a retry policy (rq-beyond §B3.3, §B1.3): back to que with a backoff, or finished to err with an outcome.
import { type Message, cancelledStatus } from '../../message/message.js';
import { type Outcome, exitReason } from '../rules/completion.js';
import type { Coalescer } from '../coordination/coalescing.js';
import type { RunEndSpool } from '../status/disk-full.js';
import type { MessageIndex } from '../index/message-index.js';
import { type Decision, type Failure, failuresOf } from '../rules/retry-policy.js';
import type { QueueEvents } from '../status/queue-events.js';
import type { ScriptRun } from '../launch/script-run.js';
import type { ExitInfo } from '../launch/script-runner.js';

export interface FailureMoveDeps {
  spool: RunEndSpool;
  index: MessageIndex;
  coalescer: Coalescer;
  now: () => number;
}

/**
 * The failure a reaped run amounts to (§B3.1), or null when it did not fail. A kill by rq (timeout,
 * stall, destroy) makes it a failure of that kind unless the script had already finished its work.
 */
export function failureOf(run: ScriptRun, outcome: Outcome, exit: { code: number | null; signal: string | null }): Failure | null {
  const failure = (kind: Failure['kind'], text: string): Failure => ({ kind, text, code: exit.code, signal: exit.signal });
  const killed = run.killed;
  if (killed && outcome.state !== 'done' && outcome.state !== 'relayed') {
    return failure(killed.kind, killed.text ?? outcome.reason ?? outcome.statusText ?? (run.jobStatus || 'destroyed'));
  }
  const c = run.completion;
  switch (outcome.failure) {
    case undefined:
      return null;
    case 'retry':
      return { ...failure('retry', (c?.kind === 'retry' && c.reason) || 'retry requested'), ...(c?.kind === 'retry' && c.delay !== null ? { delay: c.delay } : {}) };
    case 'fatal':
      return failure('fatal', (c?.kind === 'fatal' && c.text) || 'FATAL');
    default:
      // rq's words, never an empty text (a status line of nothing would end a retry's status in " - ").
      return failure(outcome.failure, outcome.reason ?? outcome.statusText ?? (run.jobStatus || (outcome.failure === 'err' ? 'the script reported err' : `${exitReason(exit.code, exit.signal, undefined)} without a completion line`)));
  }
}

/** `last_failure` as stored in `msg` (§B1.2). */
function lastFailure(f: Failure, nowMs: number): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: f.kind, text: f.text, at: new Date(nowMs).toISOString() };
  if (f.code !== null) out.code = f.code;
  if (f.signal !== null) out.signal = f.signal;
  return out;
}

/**
 * Decide, persist, then move (§B0.3): the status text and `msg` are durable in run/ before the
 * rename, so a kill -9 in between re-queues a message whose `msg` already says what was decided.
 * The status goes first: if only it lands, recovery re-queues the message and the next run
 * overwrites the text.
 */
export async function retryRun(
  d: FailureMoveDeps,
  run: ScriptRun,
  failure: Failure,
  decision: Extract<Decision, { action: 'retry' }>,
  details: Record<string, unknown>,
): Promise<void> {
  const msg = run.msg;
  const now = d.now();
  await d.spool.writeStatus(run.dir!, decision.status, true);
  msg.failures = decision.attempt;
  msg.last_failure = lastFailure(failure, now);
  msg.due = Math.round(now + decision.delay * 1000) / 1000;
  await d.spool.writeMessage('run', run.id, msg);
  const moved = await d.spool.beginMove(run.id, 'run', 'que', {
    actor: 'retry',
    details: { failure: failure.kind, retry: decision.attempt, of: decision.of, delay_s: decision.delay, due: msg.due, ...details },
    reason: failure.text,
  });
  d.index.removeRun(run.id);
  d.coalescer.release(run);
  d.index.enqueue(msg);
  await moved.sync();
}

/** What finishing to err writes (§B1.3): the status text, `outcome`, and the fields that explain it. */
export interface Finish {
  status: string;
  outcome: string;
  /** A failure counts in `failures` and is `last_failure`; a cancel is not a failure. */
  failure?: Failure;
  fields?: Record<string, unknown>;
  actor: string;
  /** More keys for the history line (a run's `exit`). */
  details?: Record<string, unknown>;
  /** Remove the message instead of moving it to err (a cancel with `purge`, rq-beyond §B5). */
  purge?: boolean;
}

/**
 * Finish to err (§B1.3 steps 1, 2 and 4) from prep, que or run: status, then `msg` with `outcome`,
 * both durable, then the rename (or the removal, for a purge); recovery completes a message caught
 * between (outcome present).
 */
export async function finishToErr(d: FailureMoveDeps, id: string, from: 'prep' | 'que' | 'run', msg: Message, f: Finish, renamed?: () => void): Promise<void> {
  await d.spool.writeStatus(d.spool.msgDir(from, id), f.status, true);
  // Memory takes the change only once it is on disk: a failed write leaves the message as it was.
  const updated: Message = { ...msg, outcome: f.outcome, ...f.fields };
  if (f.failure) {
    updated.failures = failuresOf(msg) + 1;
    updated.last_failure = lastFailure(f.failure, d.now());
  }
  await d.spool.writeMessage(from, id, updated);
  Object.assign(msg, updated);
  if (f.purge) {
    // A crash before the removal leaves `outcome` and `cancel.purge` in msg: recovery finishes the purge.
    await d.spool.remove(from, id);
    renamed?.();
    return;
  }
  const details: Record<string, unknown> = { outcome: f.outcome };
  if (f.failure) details.failure = f.failure.kind;
  Object.assign(details, f.details);
  const moved = await d.spool.beginMove(id, from, 'err', { actor: f.actor, details, reason: f.status });
  // Memory follows the rename at once, so nobody looks for the message where it no longer is.
  renamed?.();
  d.index.addFinished('err', 1);
  await moved.sync();
}

/** A run finished to err: its folded messages go back to the que first, as for any err. */
export async function finishRun(d: FailureMoveDeps, run: ScriptRun, f: Finish): Promise<void> {
  d.coalescer.release(run);
  await finishToErr(d, run.id, 'run', run.msg, f, () => d.index.removeRun(run.id));
}

/** The `exit` of the history line that ends a run (§B14). */
export function exitDetails(exit: ExitInfo, wallMs: number): { exit: { code: number | null; signal: string | null; wall_ms: number } } {
  return { exit: { code: exit.code, signal: exit.signal, wall_ms: wallMs } };
}

/** A run cancelled while it ran (rq-beyond §B5): to err `cancelled` (or gone, with purge), never retried. */
export async function endCancelled(d: FailureMoveDeps & { events: QueueEvents }, run: ScriptRun, cancel: NonNullable<ScriptRun['cancel']>, exit: ExitInfo): Promise<void> {
  await d.spool.removePid(run.dir!);
  const status = cancelledStatus(cancel.reason);
  const ms = d.now() - run.startedAt;
  run.jobStatus = status;
  run.log.info({ by: cancel.by }, status);
  const details = exitDetails(exit, ms);
  await finishRun(d, run, { status, outcome: 'cancelled', fields: { cancel }, actor: cancel.by, details, purge: cancel.purge });
  if (cancel.purge) return void d.events.emit('removed', { id: run.id, state: 'run' });
  d.events.emit('finished', { msg: run.msg, outcome: { state: 'err', statusText: status }, code: exit.code, signal: exit.signal, ms });
}
