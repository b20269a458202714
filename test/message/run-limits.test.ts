// The run limit fields: sizes as people write them, each field at and beyond its bounds, refusals that name the field, and a message's limits within its queue's.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RUN_LIMIT_FIELDS, effectiveLimits, formatSize, hasLimits, parseSize, readRunLimits } from '../../src/message/run-limits.js';
import { normaliseCreate } from '../../src/message/message.js';
import { normaliseQueueConfig } from '../../src/config/queue-config.js';

const refuse = (field: string, expected: string, received: unknown): Error => new Error(`${field} | ${expected} | ${JSON.stringify(received)}`);
const refusal = (raw: Record<string, unknown>): string => {
  try {
    readRunLimits(raw, refuse);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
};
const MiB = 1024 * 1024;

describe('sizes', () => {
  it.each([
    ['512M', 512 * MiB],
    ['1G', 1024 * MiB],
    ['1.5G', 1536 * MiB],
    ['64MiB', 64 * MiB],
    ['2048k', 2 * MiB],
    [' 3 MB ', 3 * MiB],
    ['1048576', MiB],
    [1048576, MiB],
  ])('%j is %d bytes', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['', 'lots', '12X', '-1M', '1.5', 1.5, null, true])('%j is no size', (v) => expect(parseSize(v)).toBeNaN());

  it('writes bytes back in the largest unit that divides them, and reads them back the same', () => {
    expect([formatSize(64 * MiB), formatSize(1536 * 1024), formatSize(1024 ** 3), formatSize(1000)]).toEqual(['64M', '1536K', '1G', '1000']);
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 50 }), (n) => parseSize(formatSize(n)) === n));
  });
});

describe('readRunLimits', () => {
  it('reads each field, sizes as bytes, and nothing else', () => {
    expect(readRunLimits({ memory_max: '512M', memory_high: '256M', cpu_max: '0.5', pids_max: 32, io_weight: '200', other: 1 }, refuse)).toEqual({
      memory_max: 512 * MiB,
      memory_high: 256 * MiB,
      cpu_max: 0.5,
      pids_max: 32,
      io_weight: 200,
    });
    expect(readRunLimits({ memory_max: null, cpu_max: '' }, refuse)).toEqual({});
  });

  it.each([
    [{ memory_max: '512K' }, 'memory_max | bytes, at least 1M'],
    [{ memory_max: 'lots' }, 'memory_max | bytes, at least 1M'],
    // Too much is told as too much, not as too little.
    [{ memory_max: '99999T' }, 'memory_max | bytes, at most 8191T | "99999T"'],
    [{ memory_high: 2 ** 60 }, `memory_high | bytes, at most 8191T | ${2 ** 60}`],
    [{ memory_high: '2G', memory_max: '1G' }, 'memory_high | at most memory_max (1G) | "2G"'],
    [{ cpu_max: 0 }, 'cpu_max | cores from 0.01 to 1024'],
    [{ cpu_max: 2000 }, 'cpu_max | cores from 0.01 to 1024'],
    [{ pids_max: 0 }, 'pids_max | a whole number of processes 1-4194304 | 0'],
    [{ pids_max: 2.5 }, 'pids_max | a whole number of processes'],
    [{ io_weight: 10_001 }, 'io_weight | a whole number 1-10000'],
  ])('refuses %j naming the field, the expectation and the value', (raw, text) => expect(refusal(raw)).toContain(text));

  it('is what a create takes: a bad limit refuses the whole message with the field named', () => {
    expect(normaliseCreate({ dest: 'q', pids_max: 8, memory_max: '64M' })).toMatchObject({ pids_max: 8, memory_max: 64 * MiB });
    expect(() => normaliseCreate({ dest: 'q', memory_max: '1 lot' })).toThrow(/memory_max/);
  });

  it('is what a queue config takes, with limits_best_effort a boolean', () => {
    const base = { name: 'q', script: './run', num_workers: 1 };
    expect(normaliseQueueConfig({ ...base, memory_max: '64M', cpu_max: 0.2, limits_best_effort: true }, 'q')).toMatchObject({
      memory_max: 64 * MiB,
      cpu_max: 0.2,
      limits_best_effort: true,
    });
    expect(() => normaliseQueueConfig({ ...base, pids_max: -1 }, 'q')).toThrow(/pids_max/);
    expect(() => normaliseQueueConfig({ ...base, limits_best_effort: 'yes' }, 'q')).toThrow(/limits_best_effort.*true or false/);
    expect(() => normaliseQueueConfig({ ...base, memory_max: '' }, 'q')).toThrow(/memory_max.*a limit, or no key at all/);
  });
});

describe('effectiveLimits', () => {
  it("takes the message's limit where it is lower, the queue's where the message asks more or nothing", () => {
    const queue = { memory_max: 64 * MiB, pids_max: 32 };
    expect(effectiveLimits(queue, { memory_max: 16 * MiB, pids_max: 100, cpu_max: 0.5 })).toEqual({ memory_max: 16 * MiB, pids_max: 32, cpu_max: 0.5 });
    expect(effectiveLimits(queue, {})).toEqual(queue);
    expect(hasLimits(effectiveLimits({}, {}))).toBe(false);
  });

  it('never gives a run more than its queue allows', () => {
    const limit = fc.option(fc.integer({ min: 1, max: 1e9 }), { nil: undefined });
    const limits = fc.record(Object.fromEntries(RUN_LIMIT_FIELDS.map((f) => [f, limit])));
    fc.assert(
      fc.property(limits, limits, (queue, msg) => {
        const got = effectiveLimits(queue, msg);
        return RUN_LIMIT_FIELDS.every((f) => queue[f] === undefined || (got[f] !== undefined && got[f]! <= queue[f]!));
      }),
    );
  });
});
