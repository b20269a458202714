// parseFeedLine: what a consumer of the event feed may rely on, and each way a line is refused (RQ_ERR_PROTOCOL, naming what lacks).
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { parseFeedLine } from '../../src/ipc/feed-event.js';

const base = { queue: 'q', seq: 0, at: 1 };
const line = (v: unknown) => JSON.stringify(v);

function refusal(text: string): string {
  try {
    parseFeedLine(text);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_PROTOCOL');
    return (err as RqError).message;
  }
  throw new Error(`accepted ${text}`);
}

describe('parseFeedLine', () => {
  it('takes a hello with a pid, and every event type; status and bulk need no message', () => {
    expect(parseFeedLine(line({ ...base, type: 'hello', pid: 0 }))).toEqual({ ...base, type: 'hello', pid: 0 });
    for (const type of ['created', 'moved', 'started', 'finished', 'removed', 'progress'])
      expect(parseFeedLine(line({ ...base, type, msg_id: 'm' })).type, type).toBe(type);
    expect(parseFeedLine(line({ ...base, type: 'status', status: 'UP' })).type).toBe('status');
    expect(parseFeedLine(line({ ...base, type: 'bulk', bulk: {} })).type).toBe('bulk');
  });

  it('refuses a line that is no JSON object, or lacks queue, seq or at as whole numbers from 0', () => {
    expect(refusal('{')).toBe('event feed line is not JSON: "{"');
    const lacks = (v: unknown) => `event feed line lacks queue, seq or at: ${JSON.stringify(line(v))}`;
    for (const bad of [
      null,
      [base],
      'x',
      { seq: 0, at: 1, type: 'status' },
      { ...base, queue: 5 },
      { ...base, seq: -1 },
      { ...base, seq: 1.5 },
      { ...base, at: '1' },
      { ...base, at: 2 ** 53 },
    ]) {
      expect(refusal(line(bad)), line(bad)).toBe(lacks(bad));
    }
  });

  it('refuses a hello without a whole pid, an event without its msg_id, and an unknown type', () => {
    expect(refusal(line({ ...base, type: 'hello' }))).toMatch(/^event feed hello lacks a pid: /);
    expect(refusal(line({ ...base, type: 'hello', pid: -1 }))).toMatch(/^event feed hello lacks a pid: /);
    for (const type of ['moved', 'progress']) expect(refusal(line({ ...base, type })), type).toMatch(new RegExp(`^event feed ${type} lacks msg_id: `));
    expect(refusal(line({ ...base, type: 'moved', msg_id: 5 }))).toMatch(/^event feed moved lacks msg_id: /);
    expect(refusal(line({ ...base, type: 'line', msg_id: 'm' }))).toMatch(/^event feed line of unknown type: /);
    expect(refusal(line({ ...base, msg_id: 'm' }))).toMatch(/^event feed line of unknown type: /);
  });
});
