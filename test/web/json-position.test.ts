// Where a refused JSON body goes wrong: line, column and byte of the first character no parser takes, for every kind of syntax error.
import { describe, expect, it } from 'vitest';
import { describeJsonError, locateJsonError } from '../../src/web/json-position.js';

describe('locateJsonError', () => {
  it('names the line, column and byte of the offending character', () => {
    expect(describeJsonError('{\n  "dest": "test",\n  "param1": }')).toBe('a syntax error at line 3 column 13 (byte 32): Unexpected token }');
    // Columns count characters, bytes count UTF-8.
    expect(locateJsonError('{"é": x}')).toEqual({ line: 1, column: 7, byte: 7, problem: 'Unexpected token x' });
  });

  it.each([
    ['{"a":', 1, 6, 'Unexpected end of JSON input'],
    ['', 1, 1, 'Unexpected end of JSON input'],
    ['"abc', 1, 5, 'Unexpected end of JSON input'],
    ['[1,2', 1, 5, 'Unexpected end of JSON input'],
    ['{"a" 1}', 1, 6, 'Unexpected token 1'],
    ['[1,]', 1, 4, 'Unexpected token ]'],
    ['{"a":1,}', 1, 8, 'Unexpected token }'],
    ['{"a":tru}', 1, 9, 'Unexpected token }'],
    ['01', 1, 2, 'Unexpected token 1'],
    [' [1] x', 1, 6, 'Unexpected token x'],
    ['{"a":"b\u0001"}', 1, 8, 'Bad control character in string literal'],
    ['{"a":"\\q"}', 1, 8, 'Bad escaped character'],
    ["{'a': 1}", 1, 2, "Unexpected token '"],
    ['{"a":\n\t1\n\t\n x}', 4, 2, 'Unexpected token x'],
  ])('%j: line %i column %i, %s', (text, line, column, problem) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(locateJsonError(text)).toMatchObject({ line, column, problem });
  });

  it('valid JSON has no error, however deep', () => {
    for (const text of ['{}', '[]', '{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"]}', '['.repeat(50_000) + ']'.repeat(50_000)])
      expect(locateJsonError(text)).toBeNull();
    expect(locateJsonError('['.repeat(50_000))).toMatchObject({ column: 50_001, problem: 'Unexpected end of JSON input' });
  });
});
