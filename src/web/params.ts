// Rack-style nested form parameters: `mesg[dest]=x` and `queue[coalesce_params][]=1` become objects and arrays.
import { RqError, counted, invalidField, shown } from '../errors.js';

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

// Keys that would reach Object.prototype if used as property names: refused, not dropped, so a filter named by one
// (`query[constructor]=x`) is not silently left out of what the request asks.
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

/** Called with the name (as far as it goes, `mesg[dest]`) of a parameter whose value a later pair would replace. */
type OnRepeat = (name: readonly string[]) => void;

/** Called with the name (as far as it goes, `a[__proto__]`) of a parameter whose name would reach Object.prototype; the pair is then left out. */
type OnUnsafe = (name: string) => void;

interface Told {
  repeat?: OnRepeat;
  /** Without it, such a name throws its refusal. */
  unsafe?: OnUnsafe;
}

/** The refusal of a parameter named with one of UNSAFE's names. */
const unsafeName = (name: string) => RqError.of('RQ_ERR_INVALID_FIELD', 'parameter name', 'a name without __proto__, constructor or prototype', shown(name));

function assign(target: Params, path: readonly string[], value: string, told: Told, at = 0): void {
  const head = path[at];
  const onRepeat = told.repeat;
  if (UNSAFE.has(head)) {
    const unsafe = nameOf(path.slice(0, at + 1));
    if (!told.unsafe) throw unsafeName(unsafe);
    return told.unsafe(unsafe);
  }
  const had = Object.hasOwn(target, head) ? target[head] : undefined;
  const name = () => path.slice(0, at + 1);
  if (at === path.length - 1) {
    if (had !== undefined) onRepeat?.(name());
    target[head] = value;
    return;
  }
  if (path[at + 1] === '' && at + 2 === path.length) {
    if (Array.isArray(had)) had.push(value);
    else {
      if (had !== undefined) onRepeat?.(name());
      target[head] = [value];
    }
    return;
  }
  let child = had;
  if (typeof child !== 'object' || Array.isArray(child)) {
    if (child !== undefined) onRepeat?.(name());
    child = {};
    target[head] = child;
  }
  assign(child, path, value, told, at + 1);
}

/**
 * Builds the nested params of a form from its (key, value) pairs, in order; a later value of a name replaces the earlier
 * (told to `told.repeat`), `name[]` collects; a name that would reach Object.prototype is refused (or told to `told.unsafe`).
 */
export function nestParams(pairs: Iterable<[string, string]>, told: Told = {}): Params {
  const out: Params = {};
  for (const [key, value] of pairs) assign(out, segments(key), value, told);
  return out;
}

/** A query parameter given more than once: its name and every value it was given. */
export interface RepeatedParam {
  name: string;
  values: string[];
}

// The router parses the query before any hook runs and cannot refuse; the preHandler hook asks here (requireCleanQuery).
const repeatedIn = new WeakMap<Params, RepeatedParam>();
const unsafeIn = new WeakMap<Params, string>();

const nameOf = (path: readonly string[]) =>
  path[0] +
  path
    .slice(1)
    .map((s) => `[${s}]`)
    .join('');

/** Parses a query string as a form is parsed, remembering the first parameter it gives twice (`state=done&state=err`, `a=1&a[]=2`). */
export function parseQuery(query: string): Params {
  const pairs = [...new URLSearchParams(query)];
  let repeated: readonly string[] | undefined;
  let unsafe: string | undefined;
  const out = nestParams(pairs, { repeat: (name) => (repeated ??= name), unsafe: (name) => (unsafe ??= name) });
  if (unsafe !== undefined) unsafeIn.set(out, unsafe);
  if (repeated !== undefined) {
    const name = repeated;
    const under = (key: string) => {
      const path = segments(key);
      return name.every((s, i) => path[i] === s);
    };
    repeatedIn.set(out, { name: nameOf(name), values: pairs.filter(([k]) => under(k)).map(([, v]) => v) });
  }
  return out;
}

/**
 * Refuses a query with a name that would reach Object.prototype (left out by the parser, which cannot refuse: a filter
 * `query[constructor]=x` would silently go), and one that gave a parameter more than once: the last value would
 * silently win, so `state=done&state=err` would list errors only. 400 naming it (and its values); `name[]=` lists stay lists.
 */
export function requireCleanQuery(query: unknown): void {
  const parsed = typeof query === 'object' && query !== null ? (query as Params) : undefined;
  const unsafe = parsed && unsafeIn.get(parsed);
  if (unsafe !== undefined) throw unsafeName(unsafe);
  const repeated = parsed && repeatedIn.get(parsed);
  if (repeated) throw invalidField(repeated.name, 'one value (a query parameter is given at most once)', repeated.values);
}

/**
 * Parses an application/x-www-form-urlencoded body. A %-escape that decodes to bytes that are not
 * UTF-8 (`%FF`) is refused naming its field: URLSearchParams would put U+FFFD in their place, and the
 * message would carry text its sender never wrote. A U+FFFD the body itself holds is kept.
 */
export function parseFormBody(body: string): Params {
  const pairs = [...new URLSearchParams(body)];
  if (!body.includes('\uFFFD') && !/%EF%BF%BD/i.test(body)) {
    const bad = pairs.find(([k, v]) => k.includes('\uFFFD') || v.includes('\uFFFD'));
    if (bad) {
      const n = (bad.join('').match(/\uFFFD/g) ?? []).length;
      const what = n === 1 ? 'byte sequence that is not UTF-8' : 'byte sequences that are not UTF-8';
      throw invalidField(bad[0].includes('\uFFFD') ? 'request body' : bad[0], 'UTF-8 text (each %-escape a byte of a UTF-8 sequence)', counted(n, what));
    }
  }
  return nestParams(pairs);
}

/**
 * A parameter as text: a string as given, a JSON number or boolean as the text a form would send
 * for it (`60`, `true`), undefined when absent or null. An object or array is refused, naming the
 * parameter: read as absent, `"delay": [60]` would requeue at once.
 */
export function textParam(params: Params | undefined, key: string): string | undefined {
  const v: unknown = params?.[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
  throw invalidField(key, 'a text, a number or true/false', v);
}

/** A nested object parameter such as `mesg` or `queue`, or undefined. */
export function objectParam(params: Params | undefined, key: string): Params | undefined {
  const v = params?.[key];
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
}
