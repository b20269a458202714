// The run-policy fields of a message (rq-beyond §B1.1: priority, retries, timeout, heartbeat) and the checks shared with queue config defaults.

/** Retry settings (§B3); each may come from the message, else the queue's `retry`, else these defaults. */
export interface RetrySettings {
  max_retries: number;
  backoff_base: number;
  min_retry_delay: number;
  max_retry_delay: number;
  retry_jitter: number;
}

export const RETRY_DEFAULTS: RetrySettings = { max_retries: 0, backoff_base: 1, min_retry_delay: 1, max_retry_delay: 43_200, retry_jitter: 0.5 };

/** The fields of this module a message or a queue's defaults may set. */
export interface JobFields extends Partial<RetrySettings> {
  /** rq-beyond §B7: lower runs first; 0 when absent. */
  priority?: number;
  timeout?: number;
  heartbeat_timeout?: number;
  /** rq-beyond §B4: seconds after `due` by which the message must have started. */
  max_age?: number;
  /** rq-beyond §B4: epoch seconds by which the message must have started. */
  expire_at?: number;
}

export const RETRY_FIELDS = ['max_retries', 'backoff_base', 'min_retry_delay', 'max_retry_delay', 'retry_jitter'] as const;
/** Every field here, in the order messages store them; dup, clone and relay copy them all (§B1.1). */
export const JOB_FIELDS = ['priority', ...RETRY_FIELDS, 'max_age', 'expire_at', 'timeout', 'heartbeat_timeout'] as const;
export type JobField = (typeof JOB_FIELDS)[number];
export const MAX_PRIORITY = 1_000_000;

export const MAX_RUN_SECONDS = 2_592_000;
export const MAX_KILL_GRACE = 300;

/** How a field's problem becomes an error: `invalidField` for messages, `configFieldError` for config.json. */
export type Refuse = (field: string, expected: string, received: unknown) => Error;

/**
 * A list field's items: a JSON array as it is, or the comma-separated string a CLI flag or form
 * field gives, each item trimmed and empty ones skipped (so `a,b,` is two); anything else refused.
 */
export function listItems(field: string, raw: unknown, expected: string, refuse: Refuse): unknown[] {
  if (Array.isArray(raw)) return raw;
  if (typeof raw === 'string')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  throw refuse(field, expected, raw);
}

/** A number from JSON or from the text of a CLI flag or form field; NaN when it is neither. */
export function numberOf(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
  return NaN;
}

/** The last second of year 9999: a later time is no date any clock, log or page can show. */
export const MAX_EPOCH_SECONDS = 253_402_300_799;

/**
 * A time a client gives (`due`, `expire_at`) as epoch seconds, 0 up to the end of year 9999. A value
 * a thousand times too large is likely milliseconds, and the refusal says so.
 */
export function epochSeconds(field: string, v: unknown, refuse: Refuse): number {
  const n = numberOf(v);
  if (Number.isFinite(n) && n >= 0 && n <= MAX_EPOCH_SECONDS) return n;
  // Milliseconds of this century: 1e12 is September 2001.
  const received = n >= 1e12 && n / 1000 <= MAX_EPOCH_SECONDS ? `${String(v)} (milliseconds? ${Math.floor(n / 1000)} is that time in seconds)` : v;
  throw refuse(field, `epoch seconds (a number from 0 to ${MAX_EPOCH_SECONDS}, the end of year 9999)`, received);
}

function wholeIn(field: string, v: unknown, lo: number, hi: number, refuse: Refuse): number {
  const n = numberOf(v);
  if (!Number.isInteger(n) || n < lo || n > hi) throw refuse(field, `a whole number ${lo}-${hi}`, v);
  return n;
}

/** Seconds in (lo, hi] when `above`, else [lo, hi]; kept to the millisecond. */
function secondsIn(field: string, v: unknown, lo: number, hi: number, above: boolean, refuse: Refuse): number {
  const n = numberOf(v);
  if (!Number.isFinite(n) || (above ? n <= lo : n < lo) || n > hi) throw refuse(field, `seconds ${above ? '>' : '>='} ${lo} and <= ${hi}`, v);
  return Math.round(n * 1000) / 1000;
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/**
 * Checks and copies the fields of this module from `raw` (a create request, or a queue's `retry`
 * object plus its top-level keys). `retries` is accepted for `max_retries`. Nothing is copied when
 * one field is wrong: the first problem is thrown.
 */
export function readJobFields(raw: Record<string, unknown>, refuse: Refuse, prefix = '', nowMs?: number): JobFields {
  const out: JobFields = {};
  const name = (f: string) => prefix + f;
  if (present(raw.priority)) {
    const n = numberOf(raw.priority);
    if (!Number.isInteger(n) || Math.abs(n) > MAX_PRIORITY)
      throw refuse(name('priority'), `a whole number from -${MAX_PRIORITY} to ${MAX_PRIORITY}`, raw.priority);
    out.priority = n;
  }
  const maxRetries = present(raw.max_retries) ? raw.max_retries : raw.retries;
  // Named max_retries in errors even when given as `retries` (rq-beyond §B1.12).
  if (present(maxRetries)) out.max_retries = wholeIn(name('max_retries'), maxRetries, 0, 1000, refuse);
  if (present(raw.backoff_base)) out.backoff_base = secondsIn(name('backoff_base'), raw.backoff_base, 0, 86_400, true, refuse);
  if (present(raw.min_retry_delay)) out.min_retry_delay = secondsIn(name('min_retry_delay'), raw.min_retry_delay, 0, 86_400, false, refuse);
  if (present(raw.max_retry_delay)) {
    const n = secondsIn(name('max_retry_delay'), raw.max_retry_delay, 0, MAX_RUN_SECONDS, false, refuse);
    if (out.min_retry_delay !== undefined && n < out.min_retry_delay)
      throw refuse(name('max_retry_delay'), `seconds >= min_retry_delay (${out.min_retry_delay})`, raw.max_retry_delay);
    out.max_retry_delay = n;
  }
  if (present(raw.retry_jitter)) {
    const n = numberOf(raw.retry_jitter);
    if (!(n >= 0 && n <= 1)) throw refuse(name('retry_jitter'), 'a number from 0 to 1', raw.retry_jitter);
    out.retry_jitter = n;
  }
  if (present(raw.max_age)) out.max_age = secondsIn(name('max_age'), raw.max_age, 0, 100 * 365 * 86_400, true, refuse);
  if (present(raw.expire_at)) out.expire_at = expireAt(name('expire_at'), raw.expire_at, refuse, nowMs);
  if (present(raw.timeout)) out.timeout = secondsIn(name('timeout'), raw.timeout, 0, MAX_RUN_SECONDS, true, refuse);
  if (present(raw.heartbeat_timeout)) out.heartbeat_timeout = secondsIn(name('heartbeat_timeout'), raw.heartbeat_timeout, 1, MAX_RUN_SECONDS, false, refuse);
  return out;
}

/** Epoch seconds; with `nowMs` (a create) it must be in the future. */
function expireAt(field: string, v: unknown, refuse: Refuse, nowMs: number | undefined): number {
  const n = epochSeconds(field, v, refuse);
  if (nowMs !== undefined && n * 1000 <= nowMs) throw refuse(field, 'a time in the future', `${n} (${Math.round(nowMs / 1000 - n)} s ago)`);
  return Math.round(n * 1000) / 1000;
}

/** `kill_grace` of a queue config: seconds 0-300 between TERM and KILL. */
export function readKillGrace(v: unknown, refuse: Refuse, field = 'kill_grace'): number {
  return secondsIn(field, v, 0, MAX_KILL_GRACE, false, refuse);
}
