// How a run ends (spec §3.3, §3.4): the first completion line, resend bookkeeping and the outcome, in one place.
import type { Message } from '../../message/message.js';
import type { State } from '../../message/states.js';
import { type PipeLine, parseResendSeconds, retryRequest } from './pipe-protocol.js';
import type { FailureKind } from './retry-policy.js';

export type Completion =
  | { kind: 'done' | 'err' | 'relayed' }
  | { kind: 'resend'; delay: number }
  /** rq-beyond §B1.6: this run failed; retry after `delay` s, or the backoff when null. */
  | { kind: 'retry'; delay: number | null; reason: string }
  /** rq-beyond §B1.6: this run failed and must not be retried. */
  | { kind: 'fatal'; text: string };

/** The completion a line records, if any (`fails` is an old spelling of `err`). */
export function completionOf(line: PipeLine): Completion | null {
  switch (line.keyword) {
    case 'done':
      return { kind: 'done' };
    case 'err':
    case 'fails':
      return { kind: 'err' };
    case 'relayed':
      return { kind: 'relayed' };
    case 'resend': {
      const delay = parseResendSeconds(line.arg);
      return delay === null ? null : { kind: 'resend', delay };
    }
    case 'retry':
      return { kind: 'retry', ...retryRequest(line.arg) };
    case 'fatal':
      return { kind: 'fatal', text: line.arg ?? '' };
    default:
      return null;
  }
}

/**
 * Records a line's completion when it is the run's first. A resend counts at once (spec §3.4:
 * the msg on disk carries the new count and due before the script exits); the caller writes it.
 */
export function recordCompletion(first: Completion | null, line: PipeLine, msg: Message, nowSec: number): Completion | null {
  if (first) return first;
  const c = completionOf(line);
  if (c?.kind === 'resend') {
    msg.count = (Number(msg.count) || 0) + 1;
    msg.due = nowSec + c.delay;
  }
  return c;
}

/** Ruby's rendering of a wait status, as the classic status texts carry it. */
export function waitStatusText(pid: number, code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `pid ${pid} ${signal} (signal ${signalNumber(signal)})`;
  return `pid ${pid} exit ${code ?? 0}`;
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15 };
function signalNumber(sig: string): number | string {
  return SIGNALS[sig] ?? sig;
}

/**
 * The same exit as people read it, for rq's own texts (a retry's status, `last_failure`): `exit
 * status 3`, `killed by SIGTERM`, `… after the script reported done`. The classic status text keeps
 * spec §3.3's words byte for byte, `Completion was  but …` included.
 */
export function exitReason(code: number | null, signal: NodeJS.Signals | string | null, reported: string | undefined): string {
  const how = signal ? `killed by ${signal}` : `exit status ${code ?? 0}`;
  return reported ? `${how} after the script reported ${reported}` : how;
}

export interface Outcome {
  /** `que` means a resend. */
  state: Extract<State, 'que' | 'done' | 'relayed' | 'err'>;
  /** A status text the system writes, or null to keep the script's last line. */
  statusText: string | null;
  /** The failure in rq's own words (exitReason), where statusText is the classic one. */
  reason?: string;
  /** How the run failed (rq-beyond §B3.1), or `fatal`; absent when it did not (the resend limit is not a failure). */
  failure?: FailureKind | 'fatal';
}

/** Completion rules of spec §3.3, applied when the script has been reaped. */
export function decideOutcome(
  first: Completion | null,
  pid: number,
  code: number | null,
  signal: NodeJS.Signals | null,
  count: number,
  maxCount: number,
): Outcome {
  // A script that reported retry or fatal has failed whatever its exit, like one that reported err.
  if (first?.kind === 'retry' || first?.kind === 'fatal') return { state: 'err', statusText: null, failure: first.kind };
  const clean = code === 0 && !signal;
  if (!clean && first?.kind !== 'err') {
    const kw = first?.kind ?? '';
    return {
      state: 'err',
      statusText: `PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was ${kw} but exit status was ${waitStatusText(pid, code, signal)}`,
      reason: exitReason(code, signal, kw),
      failure: 'exit',
    };
  }
  if (!first) return { state: 'err', statusText: null, failure: 'exit' };
  if (first.kind === 'err') return { state: 'err', statusText: null, failure: 'err' };
  if (first.kind === 'resend') {
    // count was already incremented when the line was read (spec §3.4: count 2, max 3 ⇒ err with 3).
    if (count >= maxCount) return { state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' };
    return { state: 'que', statusText: null };
  }
  return { state: first.kind, statusText: null };
}

/** The outcome of a script that could not be started at all. */
export function spawnFailure(spawnError: string): Outcome {
  return { state: 'err', statusText: `could not start script: ${spawnError}`, failure: 'spawn' };
}
