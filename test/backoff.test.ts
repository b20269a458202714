// The one backoff: doubling from a base to a cap, jitter that only shortens, and delays a timer holds.
import { describe, expect, it } from 'vitest';
import { Doubling, MAX_TIMER_MS, backoffDelay, timerDelay, withJitter } from '../src/backoff.js';

describe('backoff', () => {
  const p = { baseMs: 100, maxMs: 1000 };

  it('doubles from the base and stops at the cap; a negative try is the first, a huge one the cap', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(n, p))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(-3, p)).toBe(100);
    expect(backoffDelay(10_000, p)).toBe(1000);
    expect(backoffDelay(10_000, { baseMs: 1, maxMs: Infinity })).toBe(2 ** 30);
  });

  it('Doubling hands out the waits in order, peeks without moving on and starts again after reset', () => {
    const d = new Doubling(p);
    expect(d.peek()).toBe(100);
    expect([d.next(), d.next(), d.next()]).toEqual([100, 200, 400]);
    expect(d.peek()).toBe(800);
    expect(d.next()).toBe(800);
    expect([d.next(), d.next()]).toEqual([1000, 1000]);
    d.reset();
    expect(d.next()).toBe(100);
  });

  it('jitter shortens by up to its fraction and never lengthens', () => {
    expect(withJitter(1000, 0.25, 0)).toBe(1000);
    expect(withJitter(1000, 0.25, 0.5)).toBe(875);
    expect(withJitter(1000, 0.25, 0.999)).toBeCloseTo(750.25, 5);
    expect(withJitter(1000, 0, 0.9)).toBe(1000);
  });

  it('a timer delay is at least 0 and at most what setTimeout holds', () => {
    expect(timerDelay(-5)).toBe(0);
    expect(timerDelay(1234)).toBe(1234);
    expect(timerDelay(MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
    expect(timerDelay(MAX_TIMER_MS + 1)).toBe(2 ** 31 - 1);
    expect(timerDelay(Infinity)).toBe(MAX_TIMER_MS);
  });
});
