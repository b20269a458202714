// The literal values a router rules line may hold (strings, symbols, regexps, integers, booleans, arrays), read without evaluating Ruby.
import { rubyRegexp } from './ruby-regexp.js';
import { RqError, isRqError } from '../errors.js';

export type RuleValue =
  | { type: 'string'; value: string }
  | { type: 'symbol'; value: string }
  | { type: 'regexp'; value: RegExp; text: string }
  | { type: 'integer'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'nil' }
  | { type: 'array'; value: RuleValue[] };

export interface Statement {
  keyword: string;
  args: RuleValue[];
}

/** A line that is not a statement of literals: the whole rules file is then refused. */

const CLOSERS: Record<string, string> = { '{': '}', '(': ')', '[': ']', '<': '>' };

/** Reads one line: `keyword arg, arg` or `keyword(arg, arg)`, with an optional trailing `# comment`. */
export function parseStatement(line: string): Statement | null {
  const r = new LineReader(line);
  r.skipSpace();
  if (r.atEnd()) return null;
  const keyword = r.identifier();
  if (!keyword)
    throw RqError.of('RQ_ERR_RULE_SYNTAX', `expected a statement such as rule, src, dest, action, route, delay or log, found ${JSON.stringify(r.rest())}`);
  let args: RuleValue[] = [];
  const hadSpace = r.skipSpace();
  if (r.peek() === '(') {
    r.next();
    args = r.list(')');
    r.expect(')');
  } else if (!r.atEnd()) {
    if (!hadSpace) throw RqError.of('RQ_ERR_RULE_SYNTAX', `unexpected ${JSON.stringify(r.rest())} after ${keyword}`);
    args = r.list(null);
  }
  r.skipSpace();
  if (!r.atEnd()) throw RqError.of('RQ_ERR_RULE_SYNTAX', `unexpected ${JSON.stringify(r.rest())}`);
  return { keyword, args };
}

class LineReader {
  private i = 0;
  constructor(private readonly s: string) {}

  peek(): string {
    return this.s[this.i] ?? '';
  }
  next(): string {
    return this.s[this.i++] ?? '';
  }
  rest(): string {
    return this.s.slice(this.i);
  }
  /** True at the end of the line or at a comment. */
  atEnd(): boolean {
    return this.i >= this.s.length || this.s[this.i] === '#';
  }
  skipSpace(): boolean {
    const start = this.i;
    while (this.i < this.s.length && /[ \t\r]/.test(this.s[this.i])) this.i++;
    return this.i > start;
  }
  expect(c: string): void {
    this.skipSpace();
    if (this.next() !== c) throw RqError.of('RQ_ERR_RULE_SYNTAX', `expected ${JSON.stringify(c)}`);
  }
  identifier(): string | null {
    const m = /^[A-Za-z_][A-Za-z0-9_]*[?!]?/.exec(this.rest());
    if (!m) return null;
    this.i += m[0].length;
    return m[0];
  }

  /** Comma-separated values up to `close` (or the end of the line when null). */
  list(close: string | null): RuleValue[] {
    const out: RuleValue[] = [];
    this.skipSpace();
    if (close !== null && this.peek() === close) return out;
    for (;;) {
      out.push(this.value());
      this.skipSpace();
      if (this.peek() !== ',') break;
      this.next();
      this.skipSpace();
    }
    return out;
  }

  value(): RuleValue {
    this.skipSpace();
    const c = this.peek();
    if (c === '"' || c === "'") return { type: 'string', value: this.quoted(this.next()) };
    if (c === ':') {
      this.next();
      if (this.peek() === '"' || this.peek() === "'") return { type: 'symbol', value: this.quoted(this.next()) };
      const id = this.identifier();
      if (!id) throw RqError.of('RQ_ERR_RULE_SYNTAX', 'expected a symbol name after ":"');
      return { type: 'symbol', value: id };
    }
    if (c === '/') {
      this.next();
      return this.regexp('/');
    }
    if (c === '%' && this.s[this.i + 1] === 'r') {
      this.i += 2;
      const open = this.next();
      if (!open || /[A-Za-z0-9\s]/.test(open)) throw RqError.of('RQ_ERR_RULE_SYNTAX', 'expected a delimiter after %r');
      return this.regexp(CLOSERS[open] ?? open, CLOSERS[open] ? open : undefined);
    }
    if (c === '[') {
      this.next();
      const items = this.list(']');
      this.expect(']');
      return { type: 'array', value: items };
    }
    const num = /^-?\d+(?![\w.])/.exec(this.rest());
    if (num) {
      this.i += num[0].length;
      return { type: 'integer', value: Number(num[0]) };
    }
    const id = this.identifier();
    if (id === 'true' || id === 'false') return { type: 'boolean', value: id === 'true' };
    if (id === 'nil') return { type: 'nil' };
    // A bare name would be a Ruby method call or constant: code, not a literal.
    throw RqError.of('RQ_ERR_RULE_SYNTAX', id ? `${id} is not a literal (rules are not evaluated as Ruby)` : `unexpected ${JSON.stringify(this.rest())}`);
  }

  /** A Ruby string after its opening quote: '…' knows only \\ and \'; "…" the common escapes, no interpolation. */
  private quoted(q: string): string {
    let out = '';
    for (;;) {
      if (this.i >= this.s.length) throw RqError.of('RQ_ERR_RULE_SYNTAX', `unterminated string (missing ${q})`);
      const c = this.next();
      if (c === q) return out;
      if (q === '"' && c === '#' && this.peek() === '{')
        throw RqError.of('RQ_ERR_RULE_SYNTAX', 'string interpolation #{...} is Ruby code; rules are not evaluated');
      if (c !== '\\') {
        out += c;
        continue;
      }
      const n = this.next();
      if (q === "'") out += n === '\\' || n === "'" ? n : `\\${n}`;
      else out += ({ n: '\n', t: '\t', r: '\r', '0': '\0', s: ' ' } as Record<string, string>)[n] ?? n;
    }
  }

  private regexp(close: string, open?: string): RuleValue {
    let src = '';
    let depth = 0;
    for (;;) {
      if (this.i >= this.s.length) throw RqError.of('RQ_ERR_RULE_SYNTAX', `unterminated regexp (missing ${close})`);
      const c = this.next();
      if (c === '\\' && this.i < this.s.length) {
        const n = this.next();
        // An escaped delimiter is just the character itself.
        src += n === close && close !== '/' ? n : `\\${n}`;
        continue;
      }
      if (open && c === open) depth++;
      else if (c === close) {
        if (depth === 0) break;
        depth--;
      }
      src += c;
    }
    const flags = /^[a-z]*/.exec(this.rest())![0];
    this.i += flags.length;
    try {
      return { type: 'regexp', value: rubyRegexp(src, flags), text: `/${src}/${flags}` };
    } catch (err) {
      if (isRqError(err, 'RQ_ERR_RULE_SYNTAX')) throw RqError.of('RQ_ERR_RULE_SYNTAX', `regexp /${src}/${flags}: ${err.message}`);
      throw err;
    }
  }
}
