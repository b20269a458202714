// Rack-style nested form parameters: `mesg[dest]=x` and `queue[coalesce_params][]=1` become objects and arrays.

export type Params = { [key: string]: ParamValue };
export type ParamValue = string | ParamValue[] | Params;

// Keys that would reach Object.prototype if used as property names.
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

/** `a[b][]` ⇒ ["a", "b", ""]; a key without brackets is one segment. */
function segments(key: string): string[] {
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
