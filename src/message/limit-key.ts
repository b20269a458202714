// Concurrency-limit keys (rq-beyond §B12.1): a message's or queue's `limit` template, its expansion, and `limit_concurrency`.
import { RqError } from '../errors.js';
import type { Refuse } from './job-fields.js';

export const MAX_KEY = 256;
export const MAX_CONCURRENCY = 10_000;
const FIELDS = new Set(['param1', 'param2', 'param3', 'param4', 'queue']);
const CONTROL = /[\u0000-\u001f\u007f]/;
const KEY_EXPECTED = `a key of 1-${MAX_KEY} characters without control characters`;

/** Checks a `limit` template as given (before expansion): its text, and every `{name}` it names. */
export function readLimit(raw: unknown, refuse: Refuse, field = 'limit'): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_KEY || CONTROL.test(raw)) throw refuse(field, KEY_EXPECTED, raw);
  for (const [, name] of raw.matchAll(/\{([^{}]*)\}/g)) {
    if (!FIELDS.has(name)) throw RqError.of('RQ_ERR_LIMIT_TEMPLATE', field, name);
  }
  // A brace left over is a template typed wrong (`api:{param1`), not a key: it would group every tenant under one.
  if (/[{}]/.test(raw.replace(/\{(param[1-4]|queue)\}/g, ''))) throw refuse(field, 'a key, or a template whose every {…} names param1..param4 or queue', raw);
  return raw;
}

export function readLimitConcurrency(raw: unknown, refuse: Refuse, field = 'limit_concurrency'): number {
  const n = typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_CONCURRENCY) throw refuse(field, `a whole number 1-${MAX_CONCURRENCY}`, raw);
  return n;
}

/**
 * The key a message takes a slot of: its template with `{param1}`…`{param4}` and `{queue}` filled
 * in (an absent param is empty: `api:{param1}` gives `api:`). Null when it has no limit.
 */
export function expandLimit(template: string, msg: Record<string, unknown>, queue: string): string {
  return template.replace(/\{(param[1-4]|queue)\}/g, (_, name: string) =>
    name === 'queue' ? queue : msg[name] === undefined || msg[name] === null ? '' : String(msg[name]),
  );
}

/**
 * What a template's keys are reported under (rq-beyond §B16's cardinality rule): every `{…}` as
 * `*`, so `api:{param1}` gives `api:*`, like a glob of config/limits.json. Undefined for a plain key.
 */
export function limitPatternOf(template: string): string | undefined {
  const pattern = template.replace(/\{(param[1-4]|queue)\}/g, '*');
  return pattern === template ? undefined : pattern;
}

/** An expanded key's own check: params may make it too long or bring control characters. */
export function checkExpandedKey(key: string, refuse: Refuse, field = 'limit'): string {
  if (key.length === 0 || key.length > MAX_KEY || CONTROL.test(key)) throw refuse(field, KEY_EXPECTED, key);
  return key;
}
