// Failover: a broken etcd stream is said only once it has gone unanswered for the failover time, then at once until answered (on a fake clock).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Failover } from '../../src/fleet/failover.js';

const GRACE = 1000;
let said: string[];
let f: Failover;

beforeEach(() => {
  vi.useFakeTimers({ now: 10_000 });
  said = [];
  f = new Failover(GRACE, (why) => said.push(why));
});
afterEach(() => {
  f.close();
  vi.useRealTimers();
});

describe('Failover', () => {
  it('says a failure once it is the failover time old, with the latest reason, and once', () => {
    f.failing('stream broken', Date.now());
    vi.advanceTimersByTime(GRACE - 1);
    expect(said).toEqual([]);
    // Failing again within the grace: no second timer, the reason said is the last one.
    f.failing('member down', Date.now() - 500);
    vi.advanceTimersByTime(1);
    expect(said).toEqual(['member down']);
    vi.advanceTimersByTime(10 * GRACE);
    expect(said).toEqual(['member down']);
  });

  it('counts the time from when the failing began, not from when it is heard of', () => {
    f.failing('old', Date.now() - GRACE + 100);
    vi.advanceTimersByTime(99);
    expect(said).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(said).toEqual(['old']);
  });

  it('says a failure older than the failover time at the next turn', () => {
    f.failing('long gone', Date.now() - 5 * GRACE);
    expect(said).toEqual([]);
    vi.advanceTimersByTime(0);
    expect(said).toEqual(['long gone']);
  });

  it('once said, says each further failure at once, until answered', () => {
    f.failing('a', Date.now());
    vi.advanceTimersByTime(GRACE);
    f.failing('b', Date.now());
    f.failing('c', Date.now());
    expect(said).toEqual(['a', 'b', 'c']);
    f.answered();
    // Answered: the next failure waits its failover time again.
    f.failing('d', Date.now());
    expect(said).toEqual(['a', 'b', 'c']);
    vi.advanceTimersByTime(GRACE);
    expect(said).toEqual(['a', 'b', 'c', 'd']);
  });

  it('drops a failure answered within the failover time; close drops it too', () => {
    f.failing('blip', Date.now());
    vi.advanceTimersByTime(GRACE / 2);
    f.answered();
    vi.advanceTimersByTime(10 * GRACE);
    expect(said).toEqual([]);
    // A new failure after the answer gets a whole failover time of its own.
    f.failing('again', Date.now());
    vi.advanceTimersByTime(GRACE - 1);
    expect(said).toEqual([]);
    f.close();
    vi.advanceTimersByTime(10 * GRACE);
    expect(said).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});
