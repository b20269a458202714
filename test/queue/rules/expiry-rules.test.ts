// The deadline rule of rq-beyond §B4: min(due + max_age, expire_at), message over queue default, anchored no earlier than the create.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { deadlineOf, expiredStatus } from '../../../src/queue/rules/expiry.js';

// Created 2026-11-21 16:43:46.613 UTC.
const ID = '20261121.1643.46.613.2164022';
const CREATED = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
const msg = (extra: Partial<Message>) => ({ msg_id: ID, dest: 'q', due: Math.floor(CREATED / 1000), ...extra }) as Message;

describe('deadlineOf', () => {
  it('is null for a classic message on a queue without max_age', () => {
    expect(deadlineOf(msg({}), {})).toBeNull();
  });

  it('counts max_age from the due, but not from before the create (the due is whole seconds)', () => {
    expect(deadlineOf(msg({ max_age: 0.5 }), {})).toEqual({ at: CREATED + 500, by: 'max_age 0.5s after due' });
    const later = Math.floor(CREATED / 1000) + 100;
    expect(deadlineOf(msg({ max_age: 10, due: later }), {})).toEqual({ at: (later + 10) * 1000, by: 'max_age 10s after due' });
  });

  it('takes the queue default when the message sets none, and the message value over it', () => {
    expect(deadlineOf(msg({}), { max_age: 60 })?.by).toBe('max_age 60s after due');
    expect(deadlineOf(msg({ max_age: 5 }), { max_age: 60 })?.by).toBe('max_age 5s after due');
  });

  it('the earlier of max_age and expire_at wins and is named', () => {
    const soon = CREATED / 1000 + 2;
    expect(deadlineOf(msg({ max_age: 60, expire_at: soon }), {})).toEqual({ at: soon * 1000, by: 'expire_at' });
    expect(deadlineOf(msg({ max_age: 1, expire_at: soon }), {})?.by).toBe('max_age 1s after due');
    expect(deadlineOf(msg({ expire_at: soon }), {})).toEqual({ at: soon * 1000, by: 'expire_at' });
  });

  it('on a tie, names max_age', () => {
    const due = Math.floor(CREATED / 1000) + 100;
    expect(deadlineOf(msg({ due, max_age: 10, expire_at: due + 10 }), {})).toEqual({ at: (due + 10) * 1000, by: 'max_age 10s after due' });
  });
});

describe('expiredStatus', () => {
  it('names the deadline to the second and what set it', () => {
    expect(expiredStatus({ at: Date.UTC(2026, 10, 21, 16, 53, 46, 613), by: 'max_age 600s after due' })).toBe(
      'EXPIRED - not started by 2026-11-21T16:53:46Z (max_age 600s after due)',
    );
  });
});
