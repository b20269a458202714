// Evicted half-open connections closed a while later (src/web/slow-close.ts): paused at once, closed after a random hold around holdMs, at most `max` held.
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SlowClose } from '../../src/web/slow-close.js';

/** What SlowClose uses of a socket, recorded. */
class FakeSocket extends EventEmitter {
  paused = false;
  destroyed = false;
  pause() {
    this.paused = true;
    return this;
  }
  destroy() {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.emit('close');
    return this;
  }
}
const fake = () => new FakeSocket() as FakeSocket & Socket;

afterEach(() => {
  vi.useRealTimers();
});

describe('SlowClose', () => {
  it('pauses a socket at once and closes it after a hold between half and one and a half times holdMs', () => {
    vi.useFakeTimers();
    const draws = [0, 0.999];
    const slow = new SlowClose(1000, 10, () => draws.shift() ?? 0.5);
    const [short, long] = [fake(), fake()];
    slow.close(short);
    slow.close(long);
    expect([short.paused, long.paused, short.destroyed]).toEqual([true, true, false]);
    expect(slow.size).toBe(2);
    vi.advanceTimersByTime(499);
    expect(short.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(short.destroyed).toBe(true);
    vi.advanceTimersByTime(998);
    expect(long.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    expect(long.destroyed).toBe(true);
    expect(slow.size).toBe(0);
  });

  it('holds at most `max`: the one held longest is closed at once for a new one', () => {
    vi.useFakeTimers();
    const slow = new SlowClose(1000, 2, () => 0.5);
    const [a, b, c] = [fake(), fake(), fake()];
    slow.close(a);
    slow.close(b);
    slow.close(c);
    expect([a.destroyed, b.destroyed, c.destroyed]).toEqual([true, false, false]);
    expect(slow.size).toBe(2);
  });

  it('forgets a socket its client closed, and ignores one already gone or already held', () => {
    vi.useFakeTimers();
    const slow = new SlowClose(1000, 10, () => 0.5);
    const [gone, held, dead] = [fake(), fake(), fake()];
    slow.close(gone);
    gone.destroy();
    expect(slow.size).toBe(0);
    dead.destroyed = true;
    slow.close(dead);
    expect(dead.paused).toBe(false);
    slow.close(held);
    slow.close(held);
    expect(slow.size).toBe(1);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1000);
    expect(held.destroyed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
