// The retry schedule shared by limit requests, dependency registrations and notifications: 1 s doubling to 60 s, cancelled by close.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Backoff } from '../../../src/queue/coordination/backoff.js';

afterEach(() => vi.useRealTimers());

describe('Backoff', () => {
  it('waits 1 s, doubling up to 60 s, and yields nothing once closed', () => {
    const b = new Backoff();
    const waits: number[] = [];
    for (const w of b.waits()) {
      waits.push(w);
      if (waits.length === 9) b.close();
    }
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    expect([...b.waits()]).toEqual([]);
    expect(b.closed).toBe(true);
  });

  it('runs what is due, and nothing after close', () => {
    vi.useFakeTimers();
    const b = new Backoff();
    const ran: string[] = [];
    b.later(1000, () => ran.push('first'));
    b.later(5000, () => ran.push('second'));
    void b.sleep(2000).then(() => ran.push('slept'));
    vi.advanceTimersByTime(1000);
    expect(ran).toEqual(['first']);
    b.close();
    vi.advanceTimersByTime(10_000);
    expect(ran).toEqual(['first']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('sleep resolves once its time has passed, not before', async () => {
    vi.useFakeTimers();
    const b = new Backoff();
    let slept = false;
    void b.sleep(2000).then(() => (slept = true));
    await vi.advanceTimersByTimeAsync(1999);
    expect(slept).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(slept).toBe(true);
  });
});
