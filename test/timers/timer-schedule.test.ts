// Timer schedule arithmetic and delivery back-off: pure functions.
import { describe, expect, it } from 'vitest';
import { backoffDelay } from '../../src/backoff.js';
import { DELIVERY_BACKOFF } from '../../src/timers/timer-table.js';
import { afterFire, newSchedule, occurrenceAt, resumeAt, withPeriod } from '../../src/timers/timer-schedule.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe('timer schedule arithmetic', () => {
  it('anchors occurrences at t0 + k·period whatever the lateness of each fire', () => {
    let s = newSchedule(T0, 10_000);
    expect(s.next).toBe(T0);
    s = afterFire(s, T0, T0 + 37);
    expect(s.next).toBe(T0 + 10_000);
    s = afterFire(s, s.next, T0 + 10_950);
    expect(s.next).toBe(T0 + 20_000);
    expect(s.lastFire).toBe(T0 + 10_000);
  });

  it('collapses occurrences missed during a stall into the latest one', () => {
    const s = newSchedule(T0, 10_000);
    expect(occurrenceAt(s, T0 + 35_000)).toBe(T0 + 30_000);
    expect(afterFire(s, T0 + 30_000, T0 + 35_000).next).toBe(T0 + 40_000);
  });

  it('keeps the schedule for the same period and restarts it from the last fire for a new one', () => {
    const s = afterFire(newSchedule(T0, 10_000), T0, T0);
    expect(withPeriod(s, 10_000, T0 + 5000)).toBe(s);
    expect(withPeriod(s, 20_000, T0 + 5000)).toMatchObject({ next: T0 + 20_000, t0: T0 + 20_000, periodMs: 20_000 });
    // Last fire + new period already passed: now.
    expect(withPeriod(s, 3000, T0 + 5000)).toMatchObject({ next: T0 + 5000, periodMs: 3000 });
  });

  it('resumes a suspended timer at its first occurrence from now', () => {
    const s = afterFire(newSchedule(T0, 10_000), T0, T0);
    expect(resumeAt(s, T0 + 5000)).toBe(s);
    expect(resumeAt(s, T0 + 21_000).next).toBe(T0 + 30_000);
    expect(resumeAt(s, T0 + 30_000).next).toBe(T0 + 30_000);
  });

  it('backs off 1 s, 2 s, 4 s … capped at a minute', () => {
    expect([0, 1, 2, 3].map((a) => backoffDelay(a, DELIVERY_BACKOFF))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(10, DELIVERY_BACKOFF)).toBe(60_000);
    expect(backoffDelay(5000, DELIVERY_BACKOFF)).toBe(60_000);
  });
});
