// Concurrency-limit keys (rq-beyond §B12.1): templates checked as given, expanded per message, reported under their pattern.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { MAX_CONCURRENCY, MAX_KEY, checkExpandedKey, expandLimit, limitPatternOf, readLimit, readLimitConcurrency } from '../../src/message/limit-key.js';

const refuse = (field: string, expected: string, received: unknown): Error => new Error(`${field} | ${expected} | ${JSON.stringify(received)}`);
const KEY = `a key of 1-${MAX_KEY} characters without control characters`;

describe('readLimit', () => {
  it('takes keys and templates of 1-256 characters whose {…} name param1..param4 or queue', () => {
    for (const ok of ['reports', 'x', 'k'.repeat(MAX_KEY), 'api:{param1}', '{queue}/{param2}:{param3}{param4}', 'a b ü ✓'])
      expect(readLimit(ok, refuse)).toBe(ok);
  });

  it('refuses an empty, too long, non-text or control-character key, naming the field as asked', () => {
    for (const bad of ['', 'k'.repeat(MAX_KEY + 1), 'a\nb', 'tab\there', 'del\u007f', 'nul\u0000', 12, null]) {
      expect(() => readLimit(bad, refuse), JSON.stringify(bad)).toThrow(`limit | ${KEY} | ${JSON.stringify(bad)}`);
    }
    expect(() => readLimit('', refuse, 'defaults.limit')).toThrow(`defaults.limit | ${KEY} | ""`);
  });

  it('refuses a {name} that is no message field with the catalogue error naming it', () => {
    let err: unknown;
    try {
      readLimit('api:{param5}', refuse);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_LIMIT_TEMPLATE');
    expect((err as Error).message).toContain('param5');
    expect(() => readLimit('{}', refuse)).toThrow(RqError);
    expect(() => readLimit('{dest}', refuse)).toThrow(/dest/);
  });

  it('refuses a stray brace: a template typed wrong would group every tenant under one key', () => {
    const expected = 'a key, or a template whose every {…} names param1..param4 or queue';
    for (const bad of ['api:{param1', 'api:param1}', '{{param1}}', 'a{b', '}'])
      expect(() => readLimit(bad, refuse), bad).toThrow(`limit | ${expected} | ${JSON.stringify(bad)}`);
  });
});

describe('readLimitConcurrency', () => {
  it('is a whole number 1-10000, as a number or a text of digits', () => {
    for (const [raw, n] of [
      [1, 1],
      [MAX_CONCURRENCY, MAX_CONCURRENCY],
      ['7', 7],
      [' 12 ', 12],
    ] as const)
      expect(readLimitConcurrency(raw, refuse)).toBe(n);
    for (const bad of [0, MAX_CONCURRENCY + 1, 1.5, '-1', '1e2', 'two', '', null, true]) {
      expect(() => readLimitConcurrency(bad, refuse), JSON.stringify(bad)).toThrow(
        `limit_concurrency | a whole number 1-${MAX_CONCURRENCY} | ${JSON.stringify(bad)}`,
      );
    }
    expect(() => readLimitConcurrency(0, refuse, 'limits.reports')).toThrow(/^limits\.reports \|/);
  });
});

describe('expandLimit, limitPatternOf, checkExpandedKey', () => {
  it('fills params and the queue in; an absent or null param is empty; other braces stay', () => {
    expect(expandLimit('api:{param1}:{queue}', { param1: 't42' }, 'mail')).toBe('api:t42:mail');
    expect(expandLimit('{param1}{param2}{param3}{param4}', { param1: 1, param2: null, param4: false }, 'q')).toBe('1false');
    expect(expandLimit('plain', { param1: 'x' }, 'q')).toBe('plain');
    expect(expandLimit('{param5}', { param5: 'x' }, 'q')).toBe('{param5}');
  });

  it('reports a template under its pattern, each {…} as *; a plain key has none', () => {
    expect(limitPatternOf('api:{param1}')).toBe('api:*');
    expect(limitPatternOf('{queue}-{param2}')).toBe('*-*');
    expect(limitPatternOf('reports')).toBeUndefined();
  });

  it('checks an expanded key: params may make it empty, too long or bring control characters', () => {
    expect(checkExpandedKey('api:t42', refuse)).toBe('api:t42');
    expect(checkExpandedKey('k'.repeat(MAX_KEY), refuse)).toBe('k'.repeat(MAX_KEY));
    for (const bad of ['', 'k'.repeat(MAX_KEY + 1), 'api:\n']) expect(() => checkExpandedKey(bad, refuse)).toThrow(`limit | ${KEY} | ${JSON.stringify(bad)}`);
    expect(() => checkExpandedKey('', refuse, 'mesg.limit')).toThrow(/^mesg\.limit \|/);
  });
});
