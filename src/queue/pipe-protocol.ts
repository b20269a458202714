// The script → queue line protocol on fd 3 (spec §4.6): line splitting, keywords and completion rules.
import type { State } from '../message/states.js';

export type Completion =
  | { kind: 'done' | 'err' | 'relayed' }
  | { kind: 'resend'; delay: number };

export interface PipeLine {
  keyword: string;
  /** Text after the first space, or null when the line has none. */
  arg: string | null;
}

export function parseLine(line: string): PipeLine {
  const sp = line.indexOf(' ');
  return sp < 0 ? { keyword: line, arg: null } : { keyword: line.slice(0, sp), arg: line.slice(sp + 1) };
}

/** Splits a byte stream into lines, keeping a partial line across reads (fix of spec §16.10). */
export class LineSplitter {
  private rest = '';
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): string[] {
    const text = this.rest + this.decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  }

  /** What is left when the stream ends: a last line without its newline still counts. */
  end(): string[] {
    const last = this.rest + this.decoder.decode();
    this.rest = '';
    return last ? [last] : [];
  }
}

/** `resend N` / `resend N-reason`: the delay in seconds, or null when N is not a whole number. */
export function resendDelay(arg: string | null): number | null {
  const m = /^\s*(\d+)(?:-|\s|$)/.exec(arg ?? '');
  return m ? Number(m[1]) : null;
}

export interface DupRequest {
  delay: number;
  dest: string;
}

/** `dup <delay>-<flag>-<newdest>`, split on the first two dashes. */
export function parseDup(arg: string | null): DupRequest | null {
  const m = /^(\d+)-([^-]*)-(.+)$/.exec(arg ?? '');
  return m ? { delay: Number(m[1]), dest: m[3] } : null;
}

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
      const delay = resendDelay(line.arg);
      return delay === null ? null : { kind: 'resend', delay };
    }
    default:
      return null;
  }
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

export interface Outcome {
  /** `que` means a resend. */
  state: Extract<State, 'que' | 'done' | 'relayed' | 'err'>;
  /** A status text the system writes, or null to keep the script's last line. */
  statusText: string | null;
}

/** Completion rules of spec §3.3, applied when the script has been reaped. */
export function decideOutcome(first: Completion | null, pid: number, code: number | null, signal: NodeJS.Signals | null, count: number, maxCount: number): Outcome {
  const clean = code === 0 && !signal;
  if (!clean && first?.kind !== 'err') {
    const kw = first?.kind ?? '';
    return {
      state: 'err',
      statusText: `PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was ${kw} but exit status was ${waitStatusText(pid, code, signal)}`,
    };
  }
  if (!first) return { state: 'err', statusText: null };
  if (first.kind === 'resend') {
    // count was already incremented when the line was read (spec §3.4: count 2, max 3 ⇒ err with 3).
    if (count >= maxCount) return { state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' };
    return { state: 'que', statusText: null };
  }
  return { state: first.kind, statusText: null };
}
