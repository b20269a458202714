// The fd 3 line protocol: keywords and the arguments of resend and dup (line splitting: line-splitter.test.ts).
import { describe, expect, it } from 'vitest';
import { parseDup, parseLine, parseResendSeconds } from '../../../src/queue/rules/pipe-protocol.js';

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
