// RunDeadlines on fake timers and a clock the test moves: one timer per clock, armed for its deadline, never spinning before it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Expiry, RunDeadlines } from '../../../src/queue/rules/run-deadlines.js';

let clock = 0;
let fired: Expiry[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  clock = 1_000_000;
  fired = [];
});
afterEach(() => vi.useRealTimers());

/** Moves the clock and the fake timers together. */
const advance = (ms: number) => {
  clock += ms;
  vi.advanceTimersByTime(ms);
};
const deadlines = (limits: { timeout?: number; heartbeat?: number }) =>
  new RunDeadlines(
    limits,
    clock,
    () => clock,
    (e) => fired.push(e),
  );

describe('RunDeadlines', () => {
  it('a timeout is one timer for its deadline: nothing fires (or spins) before it, it fires at its millisecond', () => {
    const d = deadlines({ timeout: 10 });
    expect(vi.getTimerCount()).toBe(1);
    advance(9_999);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    advance(1);
    expect(fired).toEqual([{ kind: 'timeout', afterS: 10, text: 'TIMEOUT - killed after 10s (timeout 10s)' }]);
    d.stop();
  });

  it('a timeout beyond what setTimeout can wait (24.8 days) is armed in steps and still fires on time', () => {
    const d = deadlines({ timeout: 30 * 86_400 });
    advance(2 ** 31 - 1);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    advance(30 * 86_400_000 - (2 ** 31 - 1) - 1);
    expect(fired).toEqual([]);
    advance(1);
    expect(fired.map((e) => e.kind)).toEqual(['timeout']);
    d.stop();
  });

  it('a heartbeat looks once at its deadline; a beat since moves the next look, silence past it fires stalled', () => {
    const d = deadlines({ heartbeat: 5 });
    expect(vi.getTimerCount()).toBe(1);
    advance(3_000);
    d.beat(clock);
    advance(2_000);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(1);
    advance(2_999);
    expect(fired).toEqual([]);
    advance(1);
    expect(fired.map((e) => e.kind)).toEqual(['stalled']);
    d.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
