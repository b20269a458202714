// What a failed run leads to (rq-beyond §B3): retry after an exponential backoff with jitter, or finish to err, and the texts that say so.
import type { QueueConfig } from '../../config/queue-config.js';
import { RETRY_DEFAULTS, RETRY_FIELDS, type RetrySettings } from '../../message/job-fields.js';
import type { Message } from '../../message/message.js';
import { backoffDelay, withJitter } from '../../backoff.js';

/** §B3.1: how a run failed. */
export type FailureKind = 'err' | 'exit' | 'retry' | 'timeout' | 'stalled' | 'destroyed' | 'oom' | 'spawn' | 'internal';

export interface Failure {
  /** `fatal`: the script said so; a failure that is never retried. */
  kind: FailureKind | 'fatal';
  text: string;
  code: number | null;
  signal: string | null;
  /** Seconds from a `retry N` line. */
  delay?: number;
}

/** What `msg.outcome` says about a message a feature finished to err (§B1.3). */
export type FinishOutcome = 'failed' | 'exhausted' | 'fatal';

export type Decision =
  | { action: 'classic' }
  | { action: 'retry'; attempt: number; of: number; delay: number; status: string }
  | { action: 'finish'; outcome: FinishOutcome; status: string };

/** How many failures a message has counted so far (§B1.2 `failures`; none when absent). */
export function failuresOf(msg: Message): number {
  return Number(msg.failures) || 0;
}

/** The attempt its next run is: 1 for a first run, one more per counted failure. */
export function attemptOf(msg: Message): number {
  return failuresOf(msg) + 1;
}

/** Message fields over the queue's `retry`, over the defaults: resolved when used (§B0.5). */
export function retrySettings(msg: Message, config: Pick<QueueConfig, 'retry'>): RetrySettings {
  const out = { ...RETRY_DEFAULTS };
  for (const f of RETRY_FIELDS) {
    const v = msg[f] ?? config.retry?.[f];
    if (typeof v === 'number') out[f] = v;
  }
  return out;
}

/** §B3.2: seconds before attempt `n + 1` after the n-th failure; `u` uniform in [0, 1). */
export function retryDelay(n: number, s: RetrySettings, u: number): number {
  const d = withJitter(backoffDelay(n - 1, { baseMs: s.backoff_base, maxMs: s.max_retry_delay }), s.retry_jitter, u);
  return Math.round(Math.max(s.min_retry_delay, d) * 1000) / 1000;
}

/** `3.4`, `1`, `0.25`: seconds as people read them in a status text. */
export function seconds(s: number): string {
  return String(Math.round(s * 100) / 100);
}

/**
 * §B3.2, with `failures` the count before this run. A classic message (no retry budget, a classic
 * failure kind) gets `classic`: its status and move stay byte for byte what they were.
 */
export function decideFailure(failure: Failure, failures: number, s: RetrySettings, u: number): Decision {
  const n = failures + 1;
  if (failure.kind === 'fatal') return { action: 'finish', outcome: 'fatal', status: failure.text };
  if (n <= s.max_retries) {
    const delay = failure.delay ?? retryDelay(n, s, u);
    return { action: 'retry', attempt: n, of: s.max_retries, delay, status: `RETRY ${n}/${s.max_retries} IN ${seconds(delay)}s - ${failure.text}` };
  }
  if (s.max_retries > 0 || failure.kind === 'retry') {
    return { action: 'finish', outcome: 'exhausted', status: `RETRIES EXHAUSTED (${s.max_retries}) - ${failure.text}` };
  }
  if (failure.kind === 'timeout' || failure.kind === 'stalled' || failure.kind === 'oom') return { action: 'finish', outcome: 'failed', status: failure.text };
  return { action: 'classic' };
}

/** `RQ_LAST_FAILURE`: control characters as spaces, at most 1000 bytes. */
export function lastFailureEnv(text: string): string {
  const out = text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  // A character cut in half at byte 1000 decodes as U+FFFD: drop it rather than show it.
  return Buffer.byteLength(out) <= 1000
    ? out
    : Buffer.from(out)
        .subarray(0, 1000)
        .toString()
        .replace(/\uFFFD$/, '');
}
