// The timers socket's request handler (rq2 payloads).
import { describe, expect, it } from 'vitest';
import { handleTimersRequest } from '../../src/timers/timer-commands.js';

describe('timers socket commands', () => {
  const view = { table: { list: () => [['b', 20] as [string, number], ['a', 30] as [string, number]] }, stats: { sent: 3, errors: 1, invalid: 2 } };
  it('answers get_timers and get_status, and an error for anything else', () => {
    expect(JSON.parse(handleTimersRequest(view, '["get_timers", null]'))).toEqual(['ok', [['b', 20], ['a', 30]]]);
    expect(JSON.parse(handleTimersRequest(view, '["get_status", null]'))).toEqual(['ok', { sent: 3, errors: 1, invalid: 2 }]);
    expect(JSON.parse(handleTimersRequest(view, '["shutdown", null]'))).toEqual(['error', 'unknown command: shutdown']);
    expect(JSON.parse(handleTimersRequest(view, '["constructor", null]'))).toEqual(['error', 'unknown command: constructor']);
    expect(JSON.parse(handleTimersRequest(view, 'get_status'))[0]).toBe('error');
    expect(JSON.parse(handleTimersRequest(view, '[42]'))[1]).toMatch(/^invalid request: expected a JSON array \[command, payload\]/);
  });
});

