// The warn line for connections turned away (src/web/turn-away-log.ts): the first at once, the rest of a window counted into one line at its end.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { turnAwayLog } from '../../src/web/turn-away-log.js';
import { capturedLog } from '../helpers/captured-log.js';

const capture = () => capturedLog('warn');

afterEach(() => {
  vi.useRealTimers();
});

describe('turnAwayLog', () => {
  it('logs the first at once and the rest of the window as one line when it ends', () => {
    vi.useFakeTimers();
    const { log, lines } = capture();
    const t = turnAwayLog(log, 10_000);
    t.note('refused', { peer: 'a' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, msg: 'web connections turned away', refused: 1, evicted: 0, peer: 'a' });
    for (let i = 0; i < 500; i++) t.note(i % 2 ? 'refused' : 'evicted', { peer: `p${i}` });
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(9_999);
    expect(lines).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ refused: 250, evicted: 250, peer: 'p499', window_s: 10 });
    // Nothing more to say: the timer does not log an empty line.
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(2);
  });

  it('flush says what is left at once', () => {
    vi.useFakeTimers();
    const { log, lines } = capture();
    const t = turnAwayLog(log, 10_000);
    t.note('evicted', {});
    t.note('evicted', {});
    t.flush();
    expect(lines.map((l) => l.evicted)).toEqual([1, 1]);
    vi.advanceTimersByTime(20_000);
    expect(lines).toHaveLength(2);
  });
});
