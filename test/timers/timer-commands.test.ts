// The timers socket's request handler (rq2 payloads): classic refusals for a client that never asked, coded ones after the hello.
import { describe, expect, it } from 'vitest';
import { CODES_HELLO_RQ2 } from '../../src/ipc/reply-codes.js';
import { handleTimersRequest } from '../../src/timers/timer-commands.js';

describe('timers socket commands', () => {
  const refused = [{ file: 'x.json', reason: 'period: expected a number of seconds, received "soon"', fix: 'correct it' }];
  const undelivered = [{ file: 'y.json', occurrence: 1_900_000_000, error: 'queue nosuch not found' }];
  const view = {
    table: { list: () => [['b', 20] as [string, number], ['a', 30] as [string, number]], undelivered: () => undelivered },
    stats: { sent: 3, errors: 1, invalid: 2 },
    dir: { refusals: () => refused },
  };
  it('answers get_timers, get_status, get_refused and get_undelivered, and an error for anything else', () => {
    expect(JSON.parse(handleTimersRequest(view, '["get_refused", null]'))).toEqual(['ok', refused]);
    expect(JSON.parse(handleTimersRequest(view, '["get_undelivered", null]'))).toEqual(['ok', undelivered]);
    expect(JSON.parse(handleTimersRequest(view, '["get_timers", null]'))).toEqual([
      'ok',
      [
        ['b', 20],
        ['a', 30],
      ],
    ]);
    expect(JSON.parse(handleTimersRequest(view, '["get_status", null]'))).toEqual(['ok', { sent: 3, errors: 1, invalid: 2 }]);
    expect(JSON.parse(handleTimersRequest(view, '["shutdown", null]'))).toEqual(['error', 'unknown command: shutdown']);
    expect(JSON.parse(handleTimersRequest(view, '["constructor", null]'))).toEqual(['error', 'unknown command: constructor']);
    expect(JSON.parse(handleTimersRequest(view, 'get_status'))[0]).toBe('error');
    expect(JSON.parse(handleTimersRequest(view, '[42]'))[1]).toMatch(/^invalid request: expected a JSON array \[command, payload\]/);
  });

  it('a connection that sent the hello gets each refusal with its catalogue code; one that did not, the classic pair byte for byte', () => {
    const classic = { codes: false };
    expect(handleTimersRequest(view, '["shutdown", null]', classic)).toBe('["error","unknown command: shutdown"]');
    expect(handleTimersRequest(view, '[42]', classic)).toBe('["error","invalid request: expected a JSON array [command, payload], received [42]"]');
    const asked = { codes: false };
    expect(JSON.parse(handleTimersRequest(view, CODES_HELLO_RQ2, asked))).toEqual(['ok', 'codes']);
    expect(asked.codes).toBe(true);
    expect(JSON.parse(handleTimersRequest(view, '["shutdown", null]', asked))).toEqual(['error', 'unknown command: shutdown', 'RQ_ERR_UNKNOWN_COMMAND']);
    expect(JSON.parse(handleTimersRequest(view, 'get_status', asked))).toEqual([
      'error',
      'invalid request: expected a JSON array [command, payload], received "get_status"',
      'RQ_ERR_INVALID_REQUEST',
    ]);
    expect(JSON.parse(handleTimersRequest(view, '["get_status", null]', asked))).toEqual(['ok', { sent: 3, errors: 1, invalid: 2 }]);
  });
});
