// The message model: which request fields a create keeps, their validation, derived fields, status texts.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { type Message, DEFAULT_MAX_COUNT, normaliseCreate, pickFields, statusText, storable } from '../../src/message/message.js';

function refusal(input: unknown): RqError {
  try {
    normaliseCreate(input);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    return err as RqError;
  }
  throw new Error('expected a refusal');
}

describe('normaliseCreate', () => {
  it('adds no key for a field that was not given (undefined would still be a key)', () => {
    expect(Object.keys(normaliseCreate({ dest: 'test' }))).toEqual(['dest']);
    expect(Object.keys(normaliseCreate({ dest: 'test', force_remote: false }))).toEqual(['dest', 'force_remote']);
  });

  it('keeps only the fields a create copies (spec §2.3)', () => {
    const out = normaliseCreate({
      dest: 'test',
      orig_msg_id: 'http://h:1/q/a/1',
      count: '2',
      max_count: 4,
      due: '1795280422',
      src: 'me',
      param1: 'a',
      param2: 7,
      param3: true,
      param4: 'd',
      post_run_webhook: 'http://a/x https://b/y',
      force_remote: 0,
      _method: 'prep',
      msg_id: 'forged',
      status: 'forged',
    });
    expect(out).toEqual({
      dest: 'test',
      orig_msg_id: 'http://h:1/q/a/1',
      count: 2,
      max_count: 4,
      due: 1795280422,
      src: 'me',
      param1: 'a',
      param2: '7',
      param3: 'true',
      param4: 'd',
      post_run_webhook: ['http://a/x', 'https://b/y'],
      force_remote: 0,
    });
    expect(DEFAULT_MAX_COUNT).toBe(15);
  });

  it('requires dest with the classic text', () => {
    for (const input of [{}, { dest: '' }, { dest: null }, { src: 'x' }]) {
      const err = refusal(input);
      expect(err.code).toBe('RQ_ERR_MISSING_DEST');
      expect(err.message).toBe('input missing required "dest" parameter');
    }
  });

  it('names the field, what was expected and what was received', () => {
    expect(refusal([]).message).toBe('message: expected a JSON object of message fields, received []');
    expect(refusal({ dest: 'q', count: -1 }).message).toBe('count: expected a whole number >= 0, received -1');
    expect(refusal({ dest: 'q', max_count: 'lots' }).message).toBe('max_count: expected a whole number >= 0, received "lots"');
    expect(refusal({ dest: 'q', due: 'soon' }).message).toBe(
      'due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received "soon"',
    );
    expect(refusal({ dest: 'q', param1: { a: 1 } }).message).toBe('param1: expected a string, received {"a":1}');
    expect(refusal({ dest: 'q', param1: 'a\u0000b' }).message).toBe('param1: expected text without NUL bytes, received "a\\u0000b"');
    expect(refusal({ dest: 'q', post_run_webhook: ['ftp://x'] }).message).toBe('post_run_webhook[0]: expected an http(s) URL, received "ftp://x"');
    expect(refusal({ dest: 'q', post_run_webhook: 5 }).message).toBe('post_run_webhook: expected an array of http(s) URLs, received 5');
  });

  it('a webhook must be an http(s) URL from its first character to its last', () => {
    // Something before the scheme, or a space or newline after the host, is not a URL a POST can go to.
    expect(refusal({ dest: 'q', post_run_webhook: ['xhttp://a/x'] }).message).toBe('post_run_webhook[0]: expected an http(s) URL, received "xhttp://a/x"');
    expect(refusal({ dest: 'q', post_run_webhook: ['http://a/x', 'http://b/y z'] }).message).toBe(
      'post_run_webhook[1]: expected an http(s) URL, received "http://b/y z"',
    );
    expect(refusal({ dest: 'q', post_run_webhook: ['http://a/x\n'] }).message).toBe('post_run_webhook[0]: expected an http(s) URL, received "http://a/x\\n"');
  });

  it('treats empty due and webhook as absent', () => {
    expect(normaliseCreate({ dest: 'q', due: '', post_run_webhook: '' })).toEqual({ dest: 'q' });
  });
});

describe('storable / pickFields / status text', () => {
  const msg: Message = {
    msg_id: '1',
    dest: 'q',
    orig_msg_id: 'o',
    count: 3,
    max_count: 15,
    due: 9,
    src: 's',
    path: 'p',
    state: 'que',
    status: 'que',
    _attachments: {},
    extra: 1,
  };

  it('storable drops the derived fields and keeps unknown keys', () => {
    expect(storable(msg)).toEqual({ msg_id: '1', dest: 'q', orig_msg_id: 'o', count: 3, max_count: 15, due: 9, src: 's', extra: 1 });
    expect(msg).toHaveProperty('path', 'p'); // the input is not changed
  });

  it('pickFields copies dest and the listed fields that are set', () => {
    expect(pickFields(msg, ['src', 'param1', 'due'])).toEqual({ dest: 'q', src: 's', due: 9 });
  });

  it('statusText', () => {
    expect(statusText('done', null)).toBe('done');
    expect(statusText('done', { job_status: 'done sleeping' })).toBe('done - done sleeping');
    expect(statusText('err', { job_status: null })).toBe('err - ');
  });
});
