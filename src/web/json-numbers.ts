// JSON numbers JavaScript cannot hold: 1e400 parses to Infinity, which the queue socket's JSON would carry as null (the field silently gone).
import { RqError } from '../errors.js';

/** Where in `value` (`priority`, `messages[2].due`) the first number that parsed to ±Infinity is, or null when there is none. */
function firstInfinite(value: unknown): string | null {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'number' && !Number.isFinite(v)) return at;
    if (typeof v !== 'object' || v === null) continue;
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [`${at}[${i}]`, x]) : Object.entries(v).map(([k, x]) => [at ? `${at}.${k}` : k, x]);
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], entries[i][0]]);
  }
  return null;
}

/** The refusal of parsed JSON (a body, a JSON line, a `mesg` text: `what`) holding a number beyond ±1.8e308, naming its field; null when it has none. */
export function infiniteNumber(value: unknown, what: string): RqError | null {
  const at = firstInfinite(value);
  return at === null ? null : RqError.of('RQ_ERR_INVALID_FIELD', at || what, 'a number of at most ±1.7976931348623157e308', 'a number beyond it');
}
