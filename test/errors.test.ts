// The error catalogue: every code is used, templates fill in order and carry their status.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode, RqError, counted, fieldProblem, invalidField, isRqError, shown } from '../src/errors.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.(ts|c)$/.test(e.name) ? [p] : [];
  });
}

describe('error catalogue', () => {
  it('every code is raised somewhere in src/ besides the catalogue itself', () => {
    const src = path.resolve(__dirname, '..', 'src');
    const text = sources(src)
      .filter((f) => !f.endsWith(`${path.sep}errors.ts`))
      .map((f) => fs.readFileSync(f, 'utf8'))
      .join('\n');
    const unused = (Object.keys(ERRORS) as ErrorCode[]).filter((c) => !text.includes(`'${c}'`));
    expect(unused).toEqual([]);
  });

  it('fills a template in order and carries the status; the cause stays out of the message', () => {
    const cause = new Error('EIO');
    const err = RqError.of('RQ_ERR_DISK', 'create message', 'EIO').causedBy(cause);
    expect(err.message).toBe('create message failed: EIO');
    expect(err.status).toBe(507);
    expect(err.cause).toBe(cause);
    expect(isRqError(err, 'RQ_ERR_DISK')).toBe(true);
    expect(isRqError(err, 'RQ_ERR_CONFIG')).toBe(false);
    expect(isRqError(new Error('x'))).toBe(false);
  });

  it('invalidField and fieldProblem say the same thing: field, expected, received', () => {
    expect(invalidField('limit', 'a whole number >= 0', -1).message).toBe('limit: expected a whole number >= 0, received -1');
    expect(fieldProblem('limit', 'a whole number >= 0', -1)).toBe('limit: expected a whole number >= 0, received -1');
    expect(fieldProblem('', 'a JSON object', [])).toBe('expected a JSON object, received []');
  });
});

describe('shown', () => {
  it('shows C1 controls and the characters that hide or reorder text as \\u escapes, one per UTF-16 unit as JSON writes them', () => {
    expect(shown('a\u202eb\u200bc\u0085')).toBe('"a\\u202eb\\u200bc\\u0085"');
    // U+E0001 (LANGUAGE TAG), beyond U+FFFF: JSON.parse of the escapes gives the character back.
    const tag = shown('x\u{e0001}');
    expect(tag).toBe('"x\\udb40\\udc01"');
    expect(JSON.parse(tag)).toBe('x\u{e0001}');
  });

  it('renders a value nested deeper than the stack without throwing', () => {
    let deep: unknown[] = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(shown(deep)).toBe('[an array nested too deep to show]');
    expect(shown({ a: 1 })).toBe('{"a":1}');
  });

  it('shows what was received: NaN and Infinity as such (JSON says null), nothing for undefined, long texts cut', () => {
    expect([shown(Number.NaN), shown(-Infinity), shown(undefined), shown(null), shown(12)]).toEqual(['NaN', '-Infinity', 'nothing', 'null', '12']);
    expect(shown('x'.repeat(100))).toBe(`"${'x'.repeat(76)}...`);
  });

  it('tells a value too large to show by its size, unquoted, where a text of the same words is quoted', () => {
    expect(invalidField('ids', 'at most 3 ids', counted(4, 'ids')).message).toBe('ids: expected at most 3 ids, received 4 ids');
    expect(shown('4 ids')).toBe('"4 ids"');
  });
});
