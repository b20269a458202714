// Ruby regexp literals of the router rules (/re/flags, %r{re}flags) turned into JavaScript RegExps without evaluating Ruby.
import { RqError } from '../errors.js';

/** Thrown for a pattern rq cannot translate faithfully; the caller reports it with the line. */

/**
 * Ruby's `^`/`$` always match at line boundaries, so the JS flag `m` is always set; `\A`, `\z`
 * and `\Z` become look-arounds; `\h` is a hex digit. Ruby `m` (dot matches newline) is JS `s`;
 * `x` (extended) drops unescaped whitespace and comments; `i` is the same; `o` means nothing here.
 */
export function rubyRegexp(source: string, flags: string): RegExp {
  if (source.includes('#{')) throw RqError.of('RQ_ERR_RULE_SYNTAX', 'interpolation #{...} is Ruby code; rules are not evaluated, write the pattern literally');
  if (/\(\?[imx-]+[:)]/.test(source))
    throw RqError.of('RQ_ERR_RULE_SYNTAX', 'inline flag groups such as (?i) have no JavaScript equivalent; use the /i flag after the pattern');
  let js = 'm';
  let extended = false;
  for (const f of flags) {
    if (f === 'i') js += 'i';
    else if (f === 'm') js += 's';
    else if (f === 'x') extended = true;
    else if (f === 'o' || f === 'u' || f === 'n') continue;
    else throw RqError.of('RQ_ERR_RULE_SYNTAX', `unknown regexp flag ${JSON.stringify(f)} (expected i, m or x)`);
  }
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\' && i + 1 < source.length) {
      const n = source[i + 1];
      i++;
      if (!inClass && n === 'A') out += '(?<![\\s\\S])';
      else if (!inClass && n === 'z') out += '(?![\\s\\S])';
      else if (!inClass && n === 'Z') out += '(?=\\n?(?![\\s\\S]))';
      else if (n === 'h') out += inClass ? '0-9a-fA-F' : '[0-9a-fA-F]';
      else if (n === 'H' && !inClass) out += '[^0-9a-fA-F]';
      else if (n === '/') out += '\\/';
      else out += `\\${n}`;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      continue;
    }
    if (extended && /\s/.test(c)) continue;
    if (extended && c === '#') break;
    out += c;
  }
  try {
    return new RegExp(out, js);
  } catch (err) {
    throw RqError.of('RQ_ERR_RULE_SYNTAX', `not a valid pattern: ${(err as Error).message}`);
  }
}
