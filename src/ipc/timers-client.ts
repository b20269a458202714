// The one typed client of the timers daemon's socket (rq2 framing): a method per command.
import { type Answer, answer, isArray } from './answer.js';
import { CODES_HELLO_RQ2 } from './reply-codes.js';
import { rq2Command } from './rq1.js';

export type TimerEntry = [name: string, due: number];

/** An entry of timers/ that defines no timer, why, and what makes it one. */
export interface TimerRefusal {
  file: string;
  reason: string;
  fix: string;
}

/** A timer whose last delivery failed: its file, the occurrence (epoch seconds) not delivered, and why. */
export interface TimerUndelivered {
  file: string;
  occurrence: number;
  error: string;
}

const isUndelivered = (r: unknown): r is TimerUndelivered =>
  typeof r === 'object' &&
  r !== null &&
  typeof (r as TimerUndelivered).file === 'string' &&
  typeof (r as TimerUndelivered).occurrence === 'number' &&
  typeof (r as TimerUndelivered).error === 'string';

const isRefusal = (r: unknown): r is TimerRefusal =>
  typeof r === 'object' && r !== null && (['file', 'reason', 'fix'] as const).every((k) => typeof (r as TimerRefusal)[k] === 'string');

export class TimersClient {
  constructor(
    private readonly sock: string,
    private readonly timeoutMs = 5_000,
  ) {}

  /** Every timer and its next due (epoch seconds). */
  async timers(): Promise<Answer<TimerEntry[]>> {
    // The hello asks for codes: a refusal comes typed, never read from its text.
    const r = answer(await rq2Command(this.sock, 'get_timers', undefined, { timeoutMs: this.timeoutMs, hello: CODES_HELLO_RQ2 }), isArray);
    if (!r.ok) return r;
    return { ok: true, raw: r.raw, value: r.value.filter((t): t is TimerEntry => Array.isArray(t) && typeof t[0] === 'string' && typeof t[1] === 'number') };
  }

  /** The entries of timers/ the daemon refused or ignored, each with why. */
  async refused(): Promise<Answer<TimerRefusal[]>> {
    const r = answer(await rq2Command(this.sock, 'get_refused', undefined, { timeoutMs: this.timeoutMs, hello: CODES_HELLO_RQ2 }), isArray);
    if (!r.ok) return r;
    return { ok: true, raw: r.raw, value: r.value.filter(isRefusal) };
  }

  /** The timers whose last delivery failed, each with the occurrence and why. */
  async undelivered(): Promise<Answer<TimerUndelivered[]>> {
    const r = answer(await rq2Command(this.sock, 'get_undelivered', undefined, { timeoutMs: this.timeoutMs, hello: CODES_HELLO_RQ2 }), isArray);
    if (!r.ok) return r;
    return { ok: true, raw: r.raw, value: r.value.filter(isUndelivered) };
  }
}
