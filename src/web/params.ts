// Rack-style nested form parameters: `mesg[dest]=x` and `queue[coalesce_params][]=1` become objects and arrays.
import { RqError, shown } from '../errors.js';

export type Params = { [key: string]: ParamValue };
export type ParamValue = string | ParamValue[] | Params;

/** Deeper than any rq form or body needs (mesg[...] is 2), shallow enough that no recursion over it can overflow. */
export const MAX_PARAM_DEPTH = 32;

function tooDeep(what: string, depth: number): RqError {
  return RqError.of('RQ_ERR_INVALID_FIELD', what, `nesting at most ${MAX_PARAM_DEPTH} deep`, `${depth} levels`);
}

/**
 * Refuses a parsed value (query, form, JSON body, `mesg` text) nested deeper than MAX_PARAM_DEPTH,
 * or holding a form key that was, kept flat by nestParams; iterative, so it cannot overflow itself.
 */
export function requireShallow(value: unknown, what: string): void {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const key of Object.keys(value)) {
      const levels = segmentsOf(key).length;
      if (levels > MAX_PARAM_DEPTH) {
        throw RqError.of('RQ_ERR_INVALID_FIELD', 'parameter name', `a name nested at most ${MAX_PARAM_DEPTH} deep`, `${shown(key)} (${levels} levels)`);
      }
    }
  }
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_PARAM_DEPTH) throw tooDeep(what, depth + 1);
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
}

// Keys that would reach Object.prototype if used as property names.
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/** `a[b][]` ⇒ ["a", "b", ""]; a key without brackets is one segment. */
function segments(key: string): string[] {
  const out = segmentsOf(key);
  return out.length <= MAX_PARAM_DEPTH ? out : [key];
}

function segmentsOf(key: string): string[] {
  const open = key.indexOf('[');
  if (open <= 0) return [key];
  const out = [key.slice(0, open)];
  const re = /\[([^\]]*)\]/g;
  re.lastIndex = open;
  let m: RegExpExecArray | null;
  let end = open;
  while ((m = re.exec(key)) !== null && m.index === end) {
    out.push(m[1]);
    end = re.lastIndex;
  }
  // Trailing text after the brackets (malformed): keep the whole key flat, as Rack would not nest it either.
  return end === key.length ? out : [key];
}

function assign(target: Params, path: string[], value: string): void {
  const [head, ...rest] = path;
  if (UNSAFE.has(head)) return;
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  if (rest[0] === '' && rest.length === 1) {
    const list = target[head];
    if (Array.isArray(list)) list.push(value);
    else target[head] = [value];
    return;
  }
  let child = target[head];
  if (typeof child !== 'object' || Array.isArray(child)) {
    child = {};
    target[head] = child;
  }
  assign(child, rest, value);
}

/** Builds the nested params of a form from its (key, value) pairs, in order. */
export function nestParams(pairs: Iterable<[string, string]>): Params {
  const out: Params = {};
  for (const [key, value] of pairs) assign(out, segments(key), value);
  return out;
}

/** Parses an application/x-www-form-urlencoded body. */
export function parseFormBody(body: string): Params {
  return nestParams(new URLSearchParams(body));
}

/** A parameter as text, or undefined when absent or not a plain value. */
export function textParam(params: Params | undefined, key: string): string | undefined {
  const v = params?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** A nested object parameter such as `mesg` or `queue`, or undefined. */
export function objectParam(params: Params | undefined, key: string): Params | undefined {
  const v = params?.[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
}
