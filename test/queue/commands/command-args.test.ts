// The queue socket's argument readers as a grid: each at and beyond its bounds, absent values, and the texts of their refusals.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../../src/errors.js';
import { MAX_PAGE, countArg, flag, msgId, offsetArg, oneOf, optionalText } from '../../../src/queue/commands/command-args.js';

const ID = '20261121.1643.46.613.2164022';

function refusal(read: () => unknown): RqError {
  try {
    read();
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    return err as RqError;
  }
  throw new Error('expected a refusal');
}

describe('msgId', () => {
  it('takes an id; lacking is its own refusal; a malformed or acknowledged (dotted) id is invalid', () => {
    expect(msgId({ msg_id: ID })).toBe(ID);
    for (const lacking of [undefined, null, '']) expect(refusal(() => msgId({ msg_id: lacking })).code, String(lacking)).toBe('RQ_ERR_LACKING_FIELD');
    expect(refusal(() => msgId({})).message).toContain("'msg_id'");
    for (const bad of [`.${ID}`, 'nope', 5, `${ID}/x`]) {
      const err = refusal(() => msgId({ msg_id: bad }));
      expect(err.code, String(bad)).toBe('RQ_ERR_INVALID_FIELD');
      expect(err.message).toBe(`msg_id: expected a message id like 20261121.1643.46.613.2164022, received ${JSON.stringify(bad)}`);
    }
  });
});

describe('optionalText', () => {
  it('is absent when undefined, null or empty; takes up to max characters; refuses longer, non-text and NUL', () => {
    for (const none of [undefined, null, '']) expect(optionalText({ r: none }, 'r', 3)).toBeUndefined();
    expect(optionalText({ r: 'abc' }, 'r', 3)).toBe('abc');
    expect(refusal(() => optionalText({ r: 'abcd' }, 'r', 3)).message).toBe('r: expected text of at most 3 characters without NUL, received 4 characters');
    expect(refusal(() => optionalText({ r: 'a\u0000' }, 'r', 3)).message).toBe('r: expected text of at most 3 characters without NUL, received "a\\u0000"');
    // At max characters only the NUL refuses it: the refusal shows the text, not its length.
    expect(refusal(() => optionalText({ r: 'a\u0000b' }, 'r', 3)).message).toBe('r: expected text of at most 3 characters without NUL, received "a\\u0000b"');
    expect(refusal(() => optionalText({ r: 7 }, 'r', 3)).message).toBe('r: expected text of at most 3 characters without NUL, received 7');
  });
});

describe('flag', () => {
  it('reads the flag texts and refuses anything else by name', () => {
    expect(flag({ f: 'on' }, 'f')).toBe(true);
    expect(flag({}, 'f')).toBe(false);
    expect(refusal(() => flag({ f: 'yes' }, 'f')).message).toBe('f: expected true or false, received "yes"');
  });
});

describe('countArg', () => {
  it('is a whole number from 1 to max, as a number or digits; absent gives the fallback', () => {
    expect(countArg({ n: 1 }, 'n', 10)).toBe(1);
    expect(countArg({ n: '10' }, 'n', 10)).toBe(10);
    for (const none of [undefined, null, '']) expect(countArg({ n: none }, 'n', 10, 7)).toBe(7);
    expect(countArg({}, 'n', 10)).toBeUndefined();
    for (const bad of [0, 11, 1.5, '-1', ' 3', '3 ', '3\n', '3a', true])
      expect(refusal(() => countArg({ n: bad }, 'n', 10)).message, String(bad)).toBe(
        `n: expected a whole number from 1 to 10, received ${JSON.stringify(bad)}`,
      );
  });
});

describe('oneOf', () => {
  it('takes one of the values; absent is undefined; names the choices when refused', () => {
    expect(oneOf({ s: 'run' }, 's', ['que', 'run'])).toBe('run');
    for (const none of [undefined, null, '']) expect(oneOf({ s: none }, 's', ['que'])).toBeUndefined();
    expect(refusal(() => oneOf({ s: 'RUN' }, 's', ['que', 'run'])).message).toBe('s: expected one of que, run, received "RUN"');
    expect(refusal(() => oneOf({ s: 1 }, 's', ['que'])).message).toBe('s: expected one of que, received 1');
  });
});

describe('offsetArg', () => {
  it('is a whole number from 0 to 10,000,000; absent is 0', () => {
    for (const none of [undefined, null, '']) expect(offsetArg({ offset: none })).toBe(0);
    expect(offsetArg({ offset: '0' })).toBe(0);
    expect(offsetArg({ offset: '250' })).toBe(250);
    expect(offsetArg({ offset: 10_000_000 })).toBe(10_000_000);
    for (const bad of [-1, 10_000_001, 2.5, '1e3', 'x'])
      expect(refusal(() => offsetArg({ offset: bad })).message, String(bad)).toBe(
        `offset: expected a whole number from 0 to 10000000, received ${JSON.stringify(bad)}`,
      );
    expect(MAX_PAGE).toBe(1000);
  });
});
