// Where a JSON text stops being JSON: the line, column and byte of the first character no parser can take, for refusals that point at it.

export interface JsonSyntaxError {
  /** 1-based line and column (in characters) of the offending character, or of the end of the text. */
  line: number;
  column: number;
  /** 0-based byte offset of it in the UTF-8 text. */
  byte: number;
  /** `Unexpected token }`, `Unexpected end of JSON input`, `Bad control character in string literal`. */
  problem: string;
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX4 = /[0-9a-fA-F]{4}/y;

type Want = 'value' | 'firstValue' | 'key' | 'firstKey' | 'colon' | 'after';

/** The index of the first character of `text` that is not JSON, or -1 when it is JSON. Iterative: no nesting overflows it. */
function firstBadIndex(text: string): { at: number; problem?: string } {
  let i = 0;
  const stack: string[] = [];
  let want: Want = 'value';
  const word = (w: string): boolean => {
    let j = 0;
    while (j < w.length && text[i + j] === w[j]) j++;
    i += j;
    return j === w.length;
  };
  const string = (): string | null => {
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) return '';
      if (c === '"') {
        i++;
        return null;
      }
      if (c < ' ') return 'Bad control character in string literal';
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          HEX4.lastIndex = i + 2;
          if (!HEX4.test(text)) return ((i += 2), 'Bad Unicode escape');
          i += 6;
        } else if (e !== undefined && ESCAPES.has(e)) i += 2;
        else return ((i += 1), e === undefined ? '' : 'Bad escaped character');
      } else i++;
    }
  };
  for (;;) {
    while (i < text.length && WS.has(text[i])) i++;
    const c = text[i];
    if (want === 'firstValue' && c === ']') {
      i++;
      stack.pop();
      want = 'after';
    } else if (want === 'firstKey' && c === '}') {
      i++;
      stack.pop();
      want = 'after';
    } else if (want === 'value' || want === 'firstValue') {
      if (c === '{' || c === '[') {
        i++;
        stack.push(c);
        want = c === '{' ? 'firstKey' : 'firstValue';
        continue;
      }
      if (c === '"') {
        const bad = string();
        if (bad !== null) return { at: i, problem: bad || undefined };
      } else if (c === 't' || c === 'f' || c === 'n') {
        if (!word(c === 't' ? 'true' : c === 'f' ? 'false' : 'null')) return { at: i };
      } else {
        NUMBER.lastIndex = i;
        if (c === undefined || !NUMBER.test(text)) return { at: c === '-' ? i + 1 : i };
        i = NUMBER.lastIndex;
      }
      want = 'after';
    } else if (want === 'key' || want === 'firstKey') {
      if (c !== '"') return { at: i };
      const bad = string();
      if (bad !== null) return { at: i, problem: bad || undefined };
      want = 'colon';
    } else if (want === 'colon') {
      if (c !== ':') return { at: i };
      i++;
      want = 'value';
    } else {
      const top = stack[stack.length - 1];
      if (top === undefined) return i === text.length ? { at: -1 } : { at: i };
      if (c === ',') {
        i++;
        want = top === '{' ? 'key' : 'value';
      } else if (c === (top === '{' ? '}' : ']')) {
        i++;
        stack.pop();
        want = 'after';
      } else return { at: i };
    }
  }
}

/** A character as a refusal shows it: itself when printable, else its JSON escape. */
function visible(c: string): string {
  return /^[\x21-\x7e\u00a0-\uffff]$/u.test(c) ? c : JSON.stringify(c).slice(1, -1) || c;
}

/** Where `text`, which JSON.parse refused, goes wrong; null when it is valid JSON after all. */
export function locateJsonError(text: string): JsonSyntaxError | null {
  const { at, problem } = firstBadIndex(text);
  if (at < 0) return null;
  const index = Math.min(at, text.length);
  const before = text.slice(0, index);
  const lineStart = before.lastIndexOf('\n') + 1;
  const c = text.codePointAt(index);
  const what = problem ?? (c === undefined ? 'Unexpected end of JSON input' : `Unexpected token ${visible(String.fromCodePoint(c))}`);
  return {
    line: before.split('\n').length,
    column: [...before.slice(lineStart)].length + 1,
    byte: Buffer.byteLength(before),
    problem: what,
  };
}

/** `a syntax error at line 3 column 14 (byte 41): Unexpected token }`, the received part of a refusal. */
export function describeJsonError(text: string): string {
  const e = locateJsonError(text);
  if (!e) return 'JSON that does not parse';
  return `a syntax error at line ${e.line} column ${e.column} (byte ${e.byte}): ${e.problem}`;
}
