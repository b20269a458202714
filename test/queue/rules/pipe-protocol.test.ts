// The fd 3 line protocol: keywords and the arguments of resend and dup (line splitting: line-splitter.test.ts).
import { describe, expect, it } from 'vitest';
import { lineProblem, parseDup, parseLine, parseResendSeconds } from '../../../src/queue/rules/pipe-protocol.js';

describe('parseLine', () => {
  it('splits at the first space and gives null without one', () => {
    expect(parseLine('done all good here')).toEqual({ keyword: 'done', arg: 'all good here' });
    expect(parseLine('done')).toEqual({ keyword: 'done', arg: null });
    expect(parseLine('run ')).toEqual({ keyword: 'run', arg: '' });
    expect(parseLine(' done')).toEqual({ keyword: '', arg: 'done' });
  });
});

describe('arguments', () => {
  it('parses resend delays and dup requests', () => {
    expect(parseResendSeconds('10')).toBe(10);
    expect(parseResendSeconds('10-because')).toBe(10);
    expect(parseResendSeconds('x')).toBeNull();
    expect(parseDup('0-X-other')).toEqual({ delay: 0, dest: 'other' });
    expect(parseDup('5-X-http://h:1/q/a-b')).toEqual({ delay: 5, dest: 'http://h:1/q/a-b' });
    expect(parseDup('nope')).toBeNull();
  });

  it('anchors both at the start; takes every digit; allows an empty flag', () => {
    expect(parseResendSeconds('soon 5')).toBeNull();
    expect(parseResendSeconds(' 5 later')).toBe(5);
    expect(parseResendSeconds('5x')).toBeNull();
    expect(parseResendSeconds(null)).toBeNull();
    expect(parseDup('x1-f-q')).toBeNull();
    expect(parseDup('10-f-q')).toEqual({ delay: 10, dest: 'q' });
    expect(parseDup('5--q')).toEqual({ delay: 5, dest: 'q' });
    expect(parseDup('5-flag-q')).toEqual({ delay: 5, dest: 'q' });
    expect(parseDup(null)).toBeNull();
  });
});

describe('lineProblem', () => {
  it('names a keyword in the wrong case and a resend without its seconds; every other line is plain progress', () => {
    expect(lineProblem(parseLine('DONE upper'))).toBe('"DONE" is no keyword: keywords are lower case (done)');
    expect(lineProblem(parseLine('Resend 5'))).toBe('"Resend" is no keyword: keywords are lower case (resend)');
    expect(lineProblem(parseLine('resend 1x'))).toBe('resend takes a whole number of seconds first (resend N or resend N-reason), received "1x"');
    expect(lineProblem(parseLine('resend'))).toBe('resend takes a whole number of seconds first (resend N or resend N-reason), received ""');
    for (const ok of ['done all good', 'resend 5-later', 'run 40%', 'bogus line', '50% copied', 'fail classic text', 'Copying files'])
      expect(lineProblem(parseLine(ok)), ok).toBeNull();
  });
});
