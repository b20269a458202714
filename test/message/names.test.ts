// Names that become paths: queue names (spec §6.2), message ids (§2.1), attachment names (§2.4).
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import {
  MAX_QUEUE_NAME,
  MSG_ID_RE,
  assertMsgId,
  assertQueueName,
  MAX_ATTACHMENT_NAME_BYTES,
  attachmentNameProblem,
  isMsgId,
  isValidQueueName,
  queueNameProblem,
} from '../../src/message/names.js';

// Spec §6.2, in its order: / . space , ; : @ " ( ) { } \ + = ' ^ backquote # ~ ? [ ] % | $ & < > *
const FORBIDDEN = [
  '/',
  '.',
  ' ',
  ',',
  ';',
  ':',
  '@',
  '"',
  '(',
  ')',
  '{',
  '}',
  '\\',
  '+',
  '=',
  "'",
  '^',
  '`',
  '#',
  '~',
  '?',
  '[',
  ']',
  '%',
  '|',
  '$',
  '&',
  '<',
  '>',
  '*',
];

describe('queue names', () => {
  it.each(FORBIDDEN)('refuses %j anywhere in the name', (ch) => {
    for (const name of [`${ch}q`, `q${ch}`, `a${ch}b`, ch]) {
      expect(isValidQueueName(name), JSON.stringify(name)).toBe(false);
      expect(queueNameProblem(name)).toMatch(/^queue name: expected letters, digits/);
    }
  });

  it('refuses empty, `..`, control bytes and non-strings', () => {
    expect(queueNameProblem('')).toBe('queue name: expected a non-empty name, received ""');
    expect(isValidQueueName('..')).toBe(false);
    for (let c = 0; c < 0x20; c++) expect(isValidQueueName(`q${String.fromCharCode(c)}`), `byte ${c}`).toBe(false);
    expect(isValidQueueName('q\u007f')).toBe(false);
    expect(queueNameProblem(42)).toBe('queue name: expected a string, received 42');
    expect(isValidQueueName(undefined)).toBe(false);
    expect(isValidQueueName(null)).toBe(false);
  });

  it('refuses 129 characters and accepts 128', () => {
    expect(MAX_QUEUE_NAME).toBe(128);
    expect(isValidQueueName('a'.repeat(128))).toBe(true);
    expect(queueNameProblem('a'.repeat(129))).toBe('queue name: expected at most 128 characters, received 129');
  });

  it('accepts letters, digits, - and _, unicode letters included', () => {
    for (const name of ['a-b_c', 'test', 'Q1', '_', '-', 'zürich', 'очередь', '队列', 'café_2']) {
      expect(isValidQueueName(name), name).toBe(true);
      expect(assertQueueName(name)).toBe(name);
    }
  });

  it('refuses names that read as another: invisible and format characters, spaces of any kind, shown escaped in the refusal', () => {
    for (const [name, shownAs] of [
      ['a\u202eb', 'a\\u202eb'],
      ['a\u200bb', 'a\\u200bb'],
      ['a\u2028b', 'a\\u2028b'],
      ['a\u00a0b', 'a\u00a0b'],
      ['a\ufeffb', 'a\\ufeffb'],
    ]) {
      expect(queueNameProblem(name), shownAs).toBe(
        `queue name: expected letters, digits, '-' or '_' (none of / . space , ; : @ " ( ) { } \\ + = ' ^ \` # ~ ? [ ] % | $ & < > *, control bytes or invisible characters), received "${shownAs}"`,
      );
    }
  });

  it('assertQueueName throws a coded error with the reason', () => {
    const err = (() => {
      try {
        assertQueueName('a/b');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_INVALID_QUEUE_NAME');
    expect((err as RqError).message).toContain('received "a/b"');
  });
});

describe('message ids', () => {
  const GOOD = '20261121.1643.46.613.2164022';

  it('accepts the classic shape, and the dotted (acked) form unless told not to', () => {
    expect(MSG_ID_RE.test(GOOD)).toBe(true);
    expect(isMsgId(GOOD)).toBe(true);
    expect(isMsgId('20100901.1022.01.123.1')).toBe(true);
    expect(isMsgId(`.${GOOD}`)).toBe(true);
    expect(isMsgId(`.${GOOD}`, false)).toBe(false);
    expect(assertMsgId(GOOD)).toBe(GOOD);
  });

  it('refuses other shapes', () => {
    const bad = [
      '',
      '..',
      `..${GOOD}`,
      `${GOOD}.`,
      `${GOOD}/`,
      `../${GOOD}`,
      '2026112.1643.46.613.1',
      '20261121.164.46.613.1',
      '20261121.1643.4.613.1',
      '20261121.1643.46.61.1',
      '20261121.1643.46.613.',
      '20261121.1643.46.613',
      '20261121x1643x46x613x1',
      '20261121.1643.46.613.12a',
      ` ${GOOD}`,
      `${GOOD}\n`,
      42,
      null,
    ];
    for (const id of bad) expect(isMsgId(id), JSON.stringify(id)).toBe(false);
    expect(() => assertMsgId('nope')).toThrow(/^msg_id: expected a message id like 20261121\.1643\.46\.613\.2164022, received "nope"$/);
    try {
      assertMsgId('x');
    } catch (e) {
      expect((e as RqError).code).toBe('RQ_ERR_INVALID_MSG_ID');
    }
  });
});

describe('attachment names', () => {
  it('accepts ordinary names', () => {
    for (const n of ['studio3.jpg', 'a', 'file name with spaces', 'x.tmp', 'données.csv', 'a'.repeat(255)]) {
      expect(attachmentNameProblem(n), n).toBeNull();
    }
  });

  it('refuses a name holding an invisible or reordering character: é\u202etxt.exe reads as éexe.txt', () => {
    for (const n of ['\u00e9\u202etxt.exe', 'a\u200b.txt', 'a\u2029b']) {
      expect(attachmentNameProblem(n), JSON.stringify(n)).toBe(`Attachment name has invalid character. not allowed: ${n}`);
    }
    expect(attachmentNameProblem('caf\u00e9 menu.pdf')).toBeNull();
  });

  it("refuses new, the upload route's own name, whose attachment no URL could reach", () => {
    expect(attachmentNameProblem('new')).toBe('Attachment name new not allowed: attach/new is where attachments are uploaded');
    expect(attachmentNameProblem('new.txt')).toBeNull();
  });

  it('refuses dot-files with the classic text', () => {
    expect(attachmentNameProblem('.hidden')).toBe('Attachment name as a dot-file not allowed: .hidden');
    expect(attachmentNameProblem('..')).toBe('Attachment name as a dot-file not allowed: ..');
    expect(attachmentNameProblem('.')).toBe('Attachment name as a dot-file not allowed: .');
  });

  it.each(['~', '?', '[', ']', '%', '|', '$', '&', '<', '>'])('refuses %j with the classic text', (ch) => {
    expect(attachmentNameProblem(`a${ch}b`)).toBe(`Attachment name has invalid character. not allowed: a${ch}b`);
  });

  it('refuses /, backslash, control bytes and empty names', () => {
    for (const n of ['a/b', '/', 'a\\b', 'a\nb', 'a\u0000b', '']) {
      expect(attachmentNameProblem(n), JSON.stringify(n)).toBe(`Attachment name has invalid character. not allowed: ${n}`);
    }
  });

  it('refuses a name longer than a file name holds, 255 bytes counted in UTF-8', () => {
    expect(MAX_ATTACHMENT_NAME_BYTES).toBe(255);
    expect(attachmentNameProblem('a'.repeat(255))).toBeNull();
    expect(attachmentNameProblem('a'.repeat(256))).toBe('Attachment name too long: expected at most 255 bytes (UTF-8), received 256');
    expect(attachmentNameProblem('é'.repeat(127))).toBeNull();
    expect(attachmentNameProblem('é'.repeat(128))).toBe('Attachment name too long: expected at most 255 bytes (UTF-8), received 256');
  });
});
