// normaliseCreate's field rules at their bounds: text sizes, the environment limit, whole and epoch numbers, absent values, keys, flags.
import { describe, expect, it } from 'vitest';
import { RqError, shown } from '../../src/errors.js';
import {
  MAX_ENV_FIELD_BYTES,
  MAX_IDEMPOTENCY_KEY,
  MAX_TEXT,
  type Message,
  cancelledStatus,
  isSetFlag,
  normaliseCreate,
  pickFields,
} from '../../src/message/message.js';

function refusal(input: unknown): string {
  try {
    normaliseCreate(input);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    return (err as RqError).message;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('normaliseCreate: text fields', () => {
  it('takes up to MAX_TEXT characters in a field no script gets as one variable (src)', () => {
    expect(normaliseCreate({ dest: 'q', src: 's'.repeat(MAX_TEXT) }).src).toHaveLength(MAX_TEXT);
    expect(refusal({ dest: 'q', src: 's'.repeat(MAX_TEXT + 1) })).toBe(`src: expected at most ${MAX_TEXT} characters, received ${MAX_TEXT + 1} characters`);
  });

  it('limits the fields a script gets as environment variables to what exec takes, in bytes', () => {
    const two = 'é'; // two bytes in UTF-8
    const atLimit = two.repeat(MAX_ENV_FIELD_BYTES / 2 - 1) + 'ab';
    expect(Buffer.byteLength(atLimit)).toBe(MAX_ENV_FIELD_BYTES);
    for (const f of ['param1', 'param2', 'param3', 'param4', 'orig_msg_id']) {
      expect(normaliseCreate({ dest: 'q', [f]: atLimit })[f as 'param1']).toBe(atLimit);
      expect(refusal({ dest: 'q', [f]: `${atLimit}x` }), f).toBe(
        `${f}: expected at most ${MAX_ENV_FIELD_BYTES} bytes (a script gets it as one environment variable, and exec takes at most 128 KiB), received ${MAX_ENV_FIELD_BYTES + 1} bytes`,
      );
    }
    // src is not given to the script as a variable: far longer is fine.
    expect(normaliseCreate({ dest: 'q', src: two.repeat(MAX_ENV_FIELD_BYTES) }).src).toHaveLength(MAX_ENV_FIELD_BYTES);
  });

  it('names dest when it is not text', () => {
    expect(refusal({ dest: { q: 1 } })).toBe('dest: expected a string, received {"q":1}');
  });
});

describe('normaliseCreate: numbers', () => {
  it('count and max_count are whole numbers from 0; blank text is no number', () => {
    expect(normaliseCreate({ dest: 'q', count: 0, max_count: ' 3 ' })).toEqual({ dest: 'q', count: 0, max_count: 3 });
    expect(refusal({ dest: 'q', count: '  ' })).toBe('count: expected a whole number >= 0, received "  "');
    expect(refusal({ dest: 'q', max_count: 1.5 })).toBe('max_count: expected a whole number >= 0, received 1.5');
    // Decimal, as every whole-number field: not hex, binary or octal.
    for (const count of ['0x10', '0b11', '0o7']) expect(refusal({ dest: 'q', count })).toBe(`count: expected a whole number >= 0, received "${count}"`);
  });

  it('refuses an expire_at at or before due: the message would expire before it could run', () => {
    const due = Math.floor(Date.now() / 1000) + 3600;
    expect(normaliseCreate({ dest: 'q', due, expire_at: due + 1 })).toMatchObject({ due, expire_at: due + 1 });
    for (const expire_at of [due, due - 3000])
      expect(refusal({ dest: 'q', due, expire_at })).toBe(
        `expire_at: expected a time after due (${due}): the message would expire before it could run, received ${expire_at}`,
      );
  });

  it('due is epoch seconds from 0; blank text is no time', () => {
    expect(normaliseCreate({ dest: 'q', due: 0 })).toEqual({ dest: 'q', due: 0 });
    expect(normaliseCreate({ dest: 'q', due: '12.5' })).toEqual({ dest: 'q', due: 12.5 });
    expect(refusal({ dest: 'q', due: ' ' })).toBe('due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received " "');
    expect(refusal({ dest: 'q', due: -1 })).toBe('due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received -1');
    expect(refusal({ dest: 'q', due: Number.POSITIVE_INFINITY })).toBe(
      'due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received Infinity',
    );
  });

  it('due ends with year 9999, and a time given in milliseconds is refused as such', () => {
    expect(normaliseCreate({ dest: 'q', due: 253_402_300_799 })).toEqual({ dest: 'q', due: 253_402_300_799 });
    const expected = 'expected epoch seconds (a number from 0 to 253402300799, the end of year 9999)';
    expect(refusal({ dest: 'q', due: 253_402_300_800 })).toBe(`due: ${expected}, received 253402300800`);
    expect(refusal({ dest: 'q', due: 1e300 })).toBe(`due: ${expected}, received 1e+300`);
    expect(refusal({ dest: 'q', due: 1_796_537_141_000 })).toBe(
      `due: ${expected}, received "1796537141000 (milliseconds? 1796537141 is that time in seconds)"`,
    );
  });

  it('names a run-policy field without a prefix', () => {
    expect(refusal({ dest: 'q', priority: 'high' })).toMatch(/^priority: expected a whole number from -1000000 to 1000000, received "high"$/);
  });
});

describe('normaliseCreate: absent values and the other fields', () => {
  it('null means absent for every optional field, so a JSON client may send its blanks', () => {
    const nulls = [
      'src',
      'param1',
      'param2',
      'param3',
      'param4',
      'orig_msg_id',
      'count',
      'max_count',
      'due',
      'post_run_webhook',
      'idempotency_key',
      'tags',
      'depends',
      'depends_fail',
      'limit',
      'limit_concurrency',
    ];
    expect(Object.keys(normaliseCreate({ dest: 'q', ...Object.fromEntries(nulls.map((f) => [f, null])) }))).toEqual(['dest']);
    expect(Object.keys(normaliseCreate({ dest: 'q', idempotency_key: '', tags: '', depends_fail: '', limit_concurrency: '' }))).toEqual(['dest']);
  });

  it('keeps tags, dependencies, limits and an idempotency key when given', () => {
    const ID = '20261121.1643.46.613.7';
    expect(
      normaliseCreate({
        dest: 'q',
        tags: 'a,b',
        depends: `o/${ID}`,
        depends_fail: 'run',
        limit: 'api:{param1}',
        limit_concurrency: '2',
        idempotency_key: 'order-42',
      }),
    ).toEqual({
      dest: 'q',
      tags: ['a', 'b'],
      depends: [`o/${ID}`],
      depends_fail: 'run',
      limit: 'api:{param1}',
      limit_concurrency: 2,
      idempotency_key: 'order-42',
    });
    // Tags that come out empty are no tags.
    expect(Object.keys(normaliseCreate({ dest: 'q', tags: [] }))).toEqual(['dest']);
  });

  it('an idempotency key is 1-255 printable characters, not starting with a space', () => {
    const expected = `a key of 1 to ${MAX_IDEMPOTENCY_KEY} printable characters (a UUID, say)`;
    expect(normaliseCreate({ dest: 'q', idempotency_key: 'k'.repeat(MAX_IDEMPOTENCY_KEY) }).idempotency_key).toHaveLength(MAX_IDEMPOTENCY_KEY);
    expect(normaliseCreate({ dest: 'q', idempotency_key: 'a b ü' }).idempotency_key).toBe('a b ü');
    for (const bad of ['k'.repeat(MAX_IDEMPOTENCY_KEY + 1), ' lead', 'tab\there', 'nl\n', 'x\u007f', 42]) {
      expect(refusal({ dest: 'q', idempotency_key: bad }), JSON.stringify(bad)).toBe(`idempotency_key: expected ${expected}, received ${shown(bad)}`);
    }
  });

  it('webhooks: a text splits on any run of spaces; a nested array is no URL', () => {
    expect(normaliseCreate({ dest: 'q', post_run_webhook: 'http://a/x   https://b/y ' }).post_run_webhook).toEqual(['http://a/x', 'https://b/y']);
    expect(refusal({ dest: 'q', post_run_webhook: [['http://a/x']] })).toBe('post_run_webhook[0]: expected an http(s) URL, received ["http://a/x"]');
  });

  it('refuses a request that is no object, whatever its type', () => {
    for (const bad of [null, 'dest=q', 5, true])
      expect(refusal(bad), String(bad)).toBe(`message: expected a JSON object of message fields, received ${JSON.stringify(bad)}`);
  });
});

describe('isSetFlag, cancelledStatus, pickFields', () => {
  it('force_remote is set unless absent, null or false (spec §2.3)', () => {
    for (const v of [true, 0, '', 'false', 'no', {}]) expect(isSetFlag(v), JSON.stringify(v)).toBe(true);
    for (const v of [undefined, null, false]) expect(isSetFlag(v), String(v)).toBe(false);
  });

  it('the status of a cancelled message names the reason', () => {
    expect(cancelledStatus('operator')).toBe('CANCELLED - operator');
  });

  it('pickFields adds no key for a field the message does not have', () => {
    const msg = { msg_id: '1', dest: 'q', orig_msg_id: 'o', count: 0, max_count: 15, due: 1, src: 's' } as Message;
    expect(Object.keys(pickFields(msg, ['src', 'param2', 'priority']))).toEqual(['dest', 'src']);
  });
});
