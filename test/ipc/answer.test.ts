// Reading socket replies into typed answers: values, refusals with the codes they came with, and shapes nobody sends.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { answer, isArray, isNumber, isObject, isString, refused, valueOf } from '../../src/ipc/answer.js';

describe('answer', () => {
  it('["ok", value] is a value when it has the expected type, a protocol refusal when not', () => {
    expect(answer(['ok', 'http://h/q/a/1'], isString)).toEqual({ ok: true, value: 'http://h/q/a/1', raw: ['ok', 'http://h/q/a/1'] });
    expect(answer(['ok', 3], isString)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL', text: 'unexpected reply ["ok",3]' });
  });

  it('a bare [value] counts only where the command answers that way', () => {
    expect(answer(['UP'], isString, true)).toMatchObject({ ok: true, value: 'UP' });
    expect(answer(['UP'], isString)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    expect(answer([12, 13], isNumber, true)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
  });

  it('a refusal that came without a code is RQ_ERR_REFUSED, whatever its text says; raw is kept', () => {
    // A catalogue text is not read for its code: only the code sent with it types a refusal.
    expect(answer(['fail', 'msg not found'], isString)).toEqual({ ok: false, code: 'RQ_ERR_REFUSED', text: 'msg not found', raw: ['fail', 'msg not found'] });
    expect(answer([false, 'No attachment with that named for msg'], isString)).toMatchObject({
      ok: false,
      code: 'RQ_ERR_REFUSED',
      text: 'No attachment with that named for msg',
    });
    expect(answer(['ERROR', 'unknown command: x'], isString)).toMatchObject({ ok: false, code: 'RQ_ERR_REFUSED' });
    expect(answer(['error', 'unknown command: x', 'RQ_ERR_UNKNOWN_COMMAND'], isString)).toEqual({
      ok: false,
      code: 'RQ_ERR_UNKNOWN_COMMAND',
      text: 'unknown command: x',
      raw: ['error', 'unknown command: x'],
    });
    expect(answer(['fail', 42], isString)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    expect(answer(['weird', 'text'], isString)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL' });
    expect(answer({ not: 'an array' }, isObject)).toMatchObject({ ok: false, code: 'RQ_ERR_PROTOCOL', raw: { not: 'an array' } });
  });

  it('a code sent with the refusal types it; one not in the catalogue does not; raw is the classic pair', () => {
    expect(answer(['fail', 'some text', 'RQ_ERR_USAGE'], isString)).toEqual({ ok: false, code: 'RQ_ERR_USAGE', text: 'some text', raw: ['fail', 'some text'] });
    expect(answer(['fail', 'msg not found', 'RQ_ERR_NO_SUCH_MSG'], isString)).toMatchObject({ code: 'RQ_ERR_NO_SUCH_MSG' });
    expect(answer(['fail', 'msg not found', 'RQ_ERR_MADE_UP'], isString)).toEqual({
      ok: false,
      code: 'RQ_ERR_REFUSED',
      text: 'msg not found',
      raw: ['fail', 'msg not found', 'RQ_ERR_MADE_UP'],
    });
    expect(answer(['fail', 'msg not found', 'toString'], isString)).toMatchObject({ code: 'RQ_ERR_REFUSED' });
    expect(() => valueOf(['fail', 'give due or delay, not both', 'RQ_ERR_USAGE'])).toThrow(
      expect.objectContaining({ code: 'RQ_ERR_USAGE', message: 'give due or delay, not both' }),
    );
    expect(valueOf(['ok', 7])).toBe(7);
  });

  it('a detail sent after the code is kept with the refusal, and only after a code', () => {
    const batch = [
      'fail',
      'messages[2]: dest: expected a queue name, received 1',
      'RQ_ERR_BATCH_MESSAGE',
      { index: 2, reason: 'dest: expected a queue name, received 1' },
    ];
    expect(answer(batch, isString)).toEqual({ ok: false, code: 'RQ_ERR_BATCH_MESSAGE', text: batch[1], raw: ['fail', batch[1]], detail: batch[3] });
    expect(answer(['fail', 'x', undefined, { index: 2 }], isString)).not.toHaveProperty('detail');
  });

  it('a refusal made before anything is sent answers with its code and the classic pair', () => {
    expect(refused(RqError.of('RQ_ERR_CANNOT_FIND_MESSAGE'))).toEqual({
      ok: false,
      code: 'RQ_ERR_CANNOT_FIND_MESSAGE',
      text: 'cannot find message',
      raw: ['fail', 'cannot find message'],
    });
  });

  it('the type guards say what they check', () => {
    expect([isString('x'), isString(1)]).toEqual([true, false]);
    expect([isNumber(1), isNumber('1')]).toEqual([true, false]);
    expect([isObject({}), isObject([]), isObject(null), isObject('s')]).toEqual([true, false, false, false]);
    expect([isArray([]), isArray({})]).toEqual([true, false]);
  });
});
