// The run-policy fields' rules as a grid: every field at and beyond each bound, as JSON numbers and as the texts of flags and forms.
import { describe, expect, it } from 'vitest';
import {
  JOB_FIELDS,
  MAX_KILL_GRACE,
  MAX_PRIORITY,
  MAX_RUN_SECONDS,
  RETRY_DEFAULTS,
  RETRY_FIELDS,
  readJobFields,
  readKillGrace,
} from '../../src/message/job-fields.js';

/** A refusal that keeps what it was told, so the test reads field, expectation and received value. */
const refuse = (field: string, expected: string, received: unknown): Error =>
  new Error(`${field} | ${expected} | ${typeof received === 'string' ? received : JSON.stringify(received)}`);
const read = (raw: Record<string, unknown>, prefix = '', nowMs?: number) => readJobFields(raw, refuse, prefix, nowMs);
const refusal = (raw: Record<string, unknown>, nowMs?: number): string => {
  try {
    read(raw, '', nowMs);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
};

const SECONDS: [string, number, number, number, string][] = [
  // field, a value just refused below, the lowest accepted, the highest accepted, expected text
  ['backoff_base', 0, 0.001, 86_400, 'seconds > 0 and <= 86400'],
  ['min_retry_delay', -0.001, 0, 86_400, 'seconds >= 0 and <= 86400'],
  ['max_retry_delay', -0.001, 0, MAX_RUN_SECONDS, `seconds >= 0 and <= ${MAX_RUN_SECONDS}`],
  ['max_age', 0, 0.001, 100 * 365 * 86_400, `seconds > 0 and <= ${100 * 365 * 86_400}`],
  ['timeout', 0, 0.001, MAX_RUN_SECONDS, `seconds > 0 and <= ${MAX_RUN_SECONDS}`],
  ['heartbeat_timeout', 0.999, 1, MAX_RUN_SECONDS, `seconds >= 1 and <= ${MAX_RUN_SECONDS}`],
];

describe('readJobFields: seconds fields', () => {
  it.each(SECONDS)('%s: refuses %d, takes %d to %d, refuses above; as numbers and as texts', (field, below, lowest, highest, expected) => {
    expect(read({ [field]: lowest })).toEqual({ [field]: lowest });
    expect(read({ [field]: highest })).toEqual({ [field]: highest });
    expect(read({ [field]: String(highest) })).toEqual({ [field]: highest });
    expect(read({ [field]: ` ${lowest} ` })).toEqual({ [field]: lowest });
    expect(refusal({ [field]: below })).toBe(`${field} | ${expected} | ${below}`);
    expect(refusal({ [field]: highest + 0.001 })).toBe(`${field} | ${expected} | ${highest + 0.001}`);
    for (const bad of ['ten', '1 2', '0x10', 'Infinity', true, [], {}])
      expect(refusal({ [field]: bad }), String(bad)).toMatch(new RegExp(`^${field} \\| ${expected} \\| `));
  });

  it('keeps seconds to the millisecond, and reads exponent and signed texts', () => {
    expect(read({ timeout: 1.23456 })).toEqual({ timeout: 1.235 });
    expect(read({ timeout: '1.5e1' })).toEqual({ timeout: 15 });
    expect(read({ timeout: '+.5' })).toEqual({ timeout: 0.5 });
    expect(read({ timeout: '2.' })).toEqual({ timeout: 2 });
    expect(read({ timeout: '.25' })).toEqual({ timeout: 0.25 });
    expect(read({ timeout: '1e+1' })).toEqual({ timeout: 10 });
    expect(read({ timeout: '1e06' })).toEqual({ timeout: 1_000_000 });
    expect(refusal({ timeout: '-1' })).toBe(`timeout | seconds > 0 and <= ${MAX_RUN_SECONDS} | -1`);
  });

  it('max_retry_delay may not be below min_retry_delay, and may equal it', () => {
    expect(read({ min_retry_delay: 5, max_retry_delay: 5 })).toEqual({ min_retry_delay: 5, max_retry_delay: 5 });
    expect(refusal({ min_retry_delay: 5, max_retry_delay: 4.999 })).toBe('max_retry_delay | seconds >= min_retry_delay (5) | 4.999');
    // Without a min in the same request there is nothing to compare with.
    expect(read({ max_retry_delay: 0 })).toEqual({ max_retry_delay: 0 });
  });
});

describe('readJobFields: whole numbers and fractions', () => {
  it('priority is a whole number within ±MAX_PRIORITY', () => {
    for (const ok of [-MAX_PRIORITY, -1, 0, 7, MAX_PRIORITY]) expect(read({ priority: ok })).toEqual({ priority: ok });
    expect(read({ priority: '-3' })).toEqual({ priority: -3 });
    const expected = `a whole number from -${MAX_PRIORITY} to ${MAX_PRIORITY}`;
    for (const bad of [MAX_PRIORITY + 1, -MAX_PRIORITY - 1, 1.5, 'high']) expect(refusal({ priority: bad })).toBe(`priority | ${expected} | ${bad}`);
  });

  it('max_retries is 0-1000, also given as retries, and named max_retries in its refusal', () => {
    expect(read({ max_retries: 0 })).toEqual({ max_retries: 0 });
    expect(read({ max_retries: '1000' })).toEqual({ max_retries: 1000 });
    expect(read({ retries: 3 })).toEqual({ max_retries: 3 });
    expect(read({ max_retries: 2, retries: 9 })).toEqual({ max_retries: 2 });
    expect(read({ max_retries: '', retries: 9 })).toEqual({ max_retries: 9 });
    expect(refusal({ retries: 1001 })).toBe('max_retries | a whole number 0-1000 | 1001');
    expect(refusal({ max_retries: -1 })).toBe('max_retries | a whole number 0-1000 | -1');
    expect(refusal({ max_retries: 2.5 })).toBe('max_retries | a whole number 0-1000 | 2.5');
  });

  it('retry_jitter is a number from 0 to 1', () => {
    for (const ok of [0, 0.25, 1, '0.5']) expect(read({ retry_jitter: ok })).toEqual({ retry_jitter: Number(ok) });
    for (const bad of [-0.01, 1.01, 'lots', Number.NaN])
      expect(refusal({ retry_jitter: bad })).toBe(`retry_jitter | a number from 0 to 1 | ${typeof bad === 'string' ? bad : JSON.stringify(bad)}`);
  });
});

describe('readJobFields: expire_at, absence and prefixes', () => {
  it('expire_at is epoch seconds, and in the future when a create gives the time', () => {
    const now = 1_800_000_000_000;
    expect(read({ expire_at: 1_800_000_000.5 })).toEqual({ expire_at: 1_800_000_000.5 });
    expect(read({ expire_at: 1_800_000_000.001 }, '', now)).toEqual({ expire_at: 1_800_000_000.001 });
    expect(refusal({ expire_at: 1_800_000_000 }, now)).toBe('expire_at | a time in the future | 1800000000 (0 s ago)');
    expect(refusal({ expire_at: 1_799_999_940 }, now)).toBe('expire_at | a time in the future | 1799999940 (60 s ago)');
    expect(read({ expire_at: 0 })).toEqual({ expire_at: 0 });
    expect(refusal({ expire_at: -1 })).toBe('expire_at | epoch seconds (a number from 0 to 253402300799, the end of year 9999) | -1');
    expect(refusal({ expire_at: 'soon' })).toBe('expire_at | epoch seconds (a number from 0 to 253402300799, the end of year 9999) | soon');
  });

  it('absent, null and empty mean "not set"; nothing is returned beyond the fields given', () => {
    const empty = Object.fromEntries(JOB_FIELDS.flatMap((f) => [[f, undefined]]));
    expect(read(empty)).toEqual({});
    expect(read(Object.fromEntries(JOB_FIELDS.map((f) => [f, null])))).toEqual({});
    expect(read(Object.fromEntries(JOB_FIELDS.map((f) => [f, ''])))).toEqual({});
    expect(read({ other: 5, param1: 'x' })).toEqual({});
  });

  it('names the field with its prefix (a queue config reads retry.max_retries)', () => {
    expect(() => read({ max_retries: 'x' }, 'retry.')).toThrow('retry.max_retries | a whole number 0-1000 | x');
    expect(() => read({ min_retry_delay: 3, max_retry_delay: 1 }, 'retry.')).toThrow('retry.max_retry_delay | seconds >= min_retry_delay (3) | 1');
  });

  it('the first problem is thrown: fields are read in their stored order', () => {
    expect(refusal({ heartbeat_timeout: 0, priority: 'x' })).toMatch(/^priority \|/);
    expect(refusal({ timeout: 0, max_age: 0 })).toMatch(/^max_age \|/);
  });

  it('lists its fields in the order messages store them, retry fields with defaults', () => {
    expect(JOB_FIELDS).toEqual([
      'priority',
      'max_retries',
      'backoff_base',
      'min_retry_delay',
      'max_retry_delay',
      'retry_jitter',
      'max_age',
      'expire_at',
      'timeout',
      'heartbeat_timeout',
    ]);
    expect(Object.keys(RETRY_DEFAULTS)).toEqual([...RETRY_FIELDS]);
    expect(RETRY_DEFAULTS).toEqual({ max_retries: 0, backoff_base: 1, min_retry_delay: 1, max_retry_delay: 43_200, retry_jitter: 0.5 });
  });
});

describe('readKillGrace', () => {
  it('is seconds from 0 to MAX_KILL_GRACE, named as asked', () => {
    expect(readKillGrace(0, refuse)).toBe(0);
    expect(readKillGrace(String(MAX_KILL_GRACE), refuse)).toBe(MAX_KILL_GRACE);
    expect(() => readKillGrace(MAX_KILL_GRACE + 1, refuse)).toThrow(`kill_grace | seconds >= 0 and <= ${MAX_KILL_GRACE} | ${MAX_KILL_GRACE + 1}`);
    expect(() => readKillGrace(-1, refuse, 'defaults.kill_grace')).toThrow(`defaults.kill_grace | seconds >= 0 and <= ${MAX_KILL_GRACE} | -1`);
  });
});
