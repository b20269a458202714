// A socket reply read once, into a typed answer: a value, or a refusal with its catalogue code and text.
import { ERRORS, type ErrorCode, RqError, shown } from '../errors.js';

/** What a refusal carries; `raw` is the reply as sent, for the classic texts that quote it. */
export interface Refusal {
  ok: false;
  /** The catalogue code the refusal came with; RQ_ERR_REFUSED for one that came without (a classic server's), RQ_ERR_PROTOCOL for a reply of no known shape. */
  code: ErrorCode;
  text: string;
  raw: unknown;
  /** What the refusal names besides its code (a batch refusal's message index), as sent after the code. */
  detail?: Record<string, unknown>;
}

export type Answer<T> = { ok: true; value: T; raw: unknown } | Refusal;

/**
 * Reads `["ok", value]` (or the bare `[value]` of ping/uptime/status when `bare`) as a value that
 * `accept` checks; `["fail", text]`, the classic `[false, text]` and an unknown command's `["ERROR", text]`
 * (queue) or `["error", text]` (rq-mgr, timers) as refusals, typed by the code sent after the text.
 */
export function answer<T>(reply: unknown, accept: (v: unknown) => v is T, bare = false): Answer<T> {
  if (Array.isArray(reply)) {
    const [head, value, code, detail] = reply;
    if (bare && reply.length === 1 && accept(head)) return { ok: true, value: head, raw: reply };
    if (head === 'ok' && accept(value)) return { ok: true, value, raw: reply };
    if ((head === 'fail' || head === false || head === 'ERROR' || head === 'error') && typeof value === 'string') {
      // rq's own daemons send the code (reply-codes.ts); a text is never read for one.
      const sent = typeof code === 'string' && Object.hasOwn(ERRORS, code) ? (code as ErrorCode) : undefined;
      // raw stays the classic pair: texts that quote a reply (the classic web's) read the same whoever asked.
      const refusal: Refusal = { ok: false, code: sent ?? 'RQ_ERR_REFUSED', text: value, raw: sent ? [head, value] : reply };
      if (sent && isObject(detail)) refusal.detail = detail;
      return refusal;
    }
  }
  return { ok: false, code: 'RQ_ERR_PROTOCOL', text: `unexpected reply ${shown(reply)}`, raw: reply };
}

/** A refusal made here (a check before anything is sent) as an answer: its code and text, raw the classic pair. */
export function refused(err: RqError): Refusal {
  return { ok: false, code: err.code, text: err.message, raw: ['fail', err.message] };
}

/** A refusal as the RqError of its code, its text as sent. */
export function refusalError(r: Refusal): RqError {
  return new RqError(r.code, r.text);
}

/** The value of an `["ok", value]` reply; a refusal is thrown as the RqError of its code. */
export function valueOf(reply: unknown): unknown {
  const a = answer(reply, isAnything);
  if (!a.ok) throw refusalError(a);
  return a.value;
}

export const isAnything = (_v: unknown): _v is unknown => true;
export const isString = (v: unknown): v is string => typeof v === 'string';
export const isNumber = (v: unknown): v is number => typeof v === 'number';
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isArray = (v: unknown): v is unknown[] => Array.isArray(v);
