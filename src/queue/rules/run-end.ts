// How a run ends, decided once from its facts: a pure function from what the script said and how it exited to where the message goes.
import { type CancelRecord, cancelledStatus } from '../../message/message.js';
import { type Completion, type Outcome, decideOutcome, exitReason, spawnFailure } from './completion.js';
import type { RetrySettings } from '../../message/job-fields.js';
import { type Decision, type Failure, decideFailure } from './retry-policy.js';

/** Everything the end of a run depends on, and nothing else. */
export interface RunFacts {
  /** The queue is shutting down: the run was interrupted, not finished (rq-beyond §B13). */
  stopping: boolean;
  /** The first completion line (spec §3.3), or null when the script wrote none. */
  completion: Completion | null;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The launcher could not start the script at all. */
  spawnError?: string;
  /** `count` (already counting this run's resend) and `max_count` (spec §3.4). */
  count: number;
  maxCount: number;
  /** Why rq killed the script (timeout, stall, destroy), with the failure text it leads to. */
  killed: { kind: 'timeout' | 'stalled' | 'destroyed' | 'oom'; text: string | null } | null;
  /** The script's last status line. */
  jobStatus: string | null;
  /** A cancel asked while it ran (rq-beyond §B5). */
  cancel: CancelRecord | null;
  /** Failures counted before this run, and the message's retry policy (§B3). */
  failures: number;
  retry: RetrySettings;
  /** Uniform in [0, 1): the retry jitter. */
  random: number;
}

/** Where the message goes. */
export type RunEnd =
  | { kind: 'interrupted' }
  | { kind: 'cancelled'; status: string; purge: boolean }
  | { kind: 'retry'; failure: Failure; decision: Extract<Decision, { action: 'retry' }> }
  | { kind: 'failed'; failure: Failure; status: string; outcome: string }
  | { kind: 'resend'; delay: number; status: string | null; cancelTooLate: boolean }
  | { kind: 'finished'; outcome: Outcome; cancelTooLate: boolean };

/**
 * The failure a reaped run amounts to (§B3.1), or null when it did not fail. A kill by rq (timeout,
 * stall, destroy) makes it a failure of that kind unless the script had already finished its work.
 */
export function failureOf(f: Pick<RunFacts, 'killed' | 'completion' | 'jobStatus' | 'code' | 'signal'>, outcome: Outcome): Failure | null {
  const failure = (kind: Failure['kind'], text: string): Failure => ({ kind, text, code: f.code, signal: f.signal });
  if (f.killed && outcome.state !== 'done' && outcome.state !== 'relayed') {
    return failure(f.killed.kind, f.killed.text ?? outcome.reason ?? outcome.statusText ?? (f.jobStatus || 'destroyed'));
  }
  const c = f.completion;
  switch (outcome.failure) {
    case undefined:
      return null;
    case 'retry':
      return {
        ...failure('retry', (c?.kind === 'retry' && c.reason) || 'retry requested'),
        ...(c?.kind === 'retry' && c.delay !== null ? { delay: c.delay } : {}),
      };
    case 'fatal':
      return failure('fatal', (c?.kind === 'fatal' && c.text) || 'FATAL');
    default:
      // rq's words, never an empty text (a status line of nothing would end a retry's status in " - ").
      return failure(
        outcome.failure,
        outcome.reason ??
          outcome.statusText ??
          (f.jobStatus || (outcome.failure === 'err' ? 'the script reported err' : `${exitReason(f.code, f.signal, undefined)} without a completion line`)),
      );
  }
}

/** The one decision of a run's end. */
export function decideRunEnd(f: RunFacts): RunEnd {
  if (f.stopping) return { kind: 'interrupted' };
  const classic = f.spawnError !== undefined ? spawnFailure(f.spawnError) : decideOutcome(f.completion, f.pid, f.code, f.signal, f.count, f.maxCount);
  const finishedWork = classic.state === 'done' || classic.state === 'relayed';
  // Cancelled: err `cancelled`, never retried, unless the script had already finished its work.
  if (f.cancel && !finishedWork) return { kind: 'cancelled', status: cancelledStatus(f.cancel.reason), purge: f.cancel.purge === true };
  const cancelTooLate = f.cancel !== null;
  const failure = failureOf(f, classic);
  const decision: Decision = failure ? decideFailure(failure, f.failures, f.retry, f.random) : { action: 'classic' };
  if (decision.action === 'retry') return { kind: 'retry', failure: failure!, decision };
  if (decision.action === 'finish') return { kind: 'failed', failure: failure!, status: decision.status, outcome: decision.outcome };
  if (classic.state === 'que')
    return { kind: 'resend', delay: f.completion?.kind === 'resend' ? f.completion.delay : 0, status: classic.statusText, cancelTooLate };
  return { kind: 'finished', outcome: classic, cancelTooLate };
}
