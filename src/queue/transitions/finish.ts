// Finishing a message to err (rq-beyond §B1.3): the status, then `msg` with its outcome, both durable, then the rename or the removal.
import type { Message } from '../../message/message.js';
import type { MessageIndex } from '../index/message-index.js';
import { type Failure, failuresOf } from '../rules/retry-policy.js';
import type { RunEndSpool } from '../status/disk-full.js';

export interface FinishDeps {
  spool: RunEndSpool;
  index: MessageIndex;
  now: () => number;
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

/** `last_failure` as stored in `msg` (§B1.2). */
export function lastFailure(f: Failure, nowMs: number): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: f.kind, text: f.text, at: new Date(nowMs).toISOString() };
  if (f.code !== null) out.code = f.code;
  if (f.signal !== null) out.signal = f.signal;
  return out;
}

/**
 * Finish to err (§B1.3 steps 1, 2 and 4) from prep, que or run: status, then `msg` with `outcome`,
 * both durable, then the rename (or the removal, for a purge); recovery completes a message caught
 * between (outcome present). `renamed` runs as soon as the message has left `from`.
 */
export async function finishToErr(d: FinishDeps, id: string, from: 'prep' | 'que' | 'run', msg: Message, f: Finish, renamed?: () => void): Promise<void> {
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
