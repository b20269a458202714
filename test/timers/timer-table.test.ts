// The timer table on a fake clock: drift-free fires, edits, suspension, retries and supersession.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TimerConfig } from '../../src/config/timer-config.js';
import type { CreateFields } from '../../src/message/message.js';
import { silentLogger } from '../../src/log.js';
import type { DeliveryResult } from '../../src/timers/timer-delivery.js';
import { TimerTable, newStats } from '../../src/timers/timer-table.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

describe('timer table', () => {
  const sent: { fields: CreateFields; at: number }[] = [];
  let results: DeliveryResult[] = [];
  const deliver = async (fields: CreateFields): Promise<DeliveryResult> => {
    sent.push({ fields, at: Date.now() });
    return results.shift() ?? { ok: true, id: `id${sent.length}` };
  };
  const def = (period: number, param1 = 'p'): TimerConfig => ({ period, msg: { dest: 'q', param1 } });
  let stats = newStats();
  let table: TimerTable;

  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    sent.length = 0;
    results = [];
    stats = newStats();
    table = new TimerTable({ deliver, stats, log: silentLogger() });
  });
  afterEach(async () => {
    await table.close();
    vi.useRealTimers();
  });

  it('fires a new timer at once, then every period, with due = the occurrence and a default src', async () => {
    expect(table.define('t', 't.json', def(10))).toBe('added');
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(25_000);
    expect(sent.map((s) => s.fields.due)).toEqual([T0 / 1000, T0 / 1000 + 10, T0 / 1000 + 20]);
    expect(sent[0].fields).toEqual({ dest: 'q', src: 'timer:t', param1: 'p', due: T0 / 1000 });
    expect(table.list()).toEqual([['t', T0 / 1000 + 30]]);
    expect(stats.sent).toBe(3);
  });

  it('keeps the schedule across an edit: no double fire, no extra fire, new content used', async () => {
    table.define('t', 't.json', def(10, 'v1'));
    await vi.advanceTimersByTimeAsync(4000);
    expect(table.define('t', 't.json', def(10, 'v1'))).toBe('unchanged');
    expect(table.define('t', 't.json', def(10, 'v2'))).toBe('changed');
    await vi.advanceTimersByTimeAsync(5999);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((s) => s.fields.param1)).toEqual(['v1', 'v2']);
    // New period: last fire (T0+10 s) + 30 s.
    table.define('t', 't.json', def(30, 'v3'));
    expect(table.list()).toEqual([['t', T0 / 1000 + 40]]);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(sent.map((s) => s.fields.due! - T0 / 1000)).toEqual([0, 10, 40]);
  });

  it('suspends an invalid timer and resumes its schedule when fixed; removal forgets it', async () => {
    table.define('t', 't.json', def(10));
    await vi.advanceTimersByTimeAsync(1000);
    table.suspend('t');
    expect(table.list()).toEqual([]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sent).toHaveLength(1);
    table.define('t', 't.json', def(10));
    await vi.advanceTimersByTimeAsync(0);
    // Back in rhythm at the next occurrence, without an immediate fire for what passed meanwhile.
    expect(sent).toHaveLength(1);
    expect(table.list()).toEqual([['t', T0 / 1000 + 30]]);
    await vi.advanceTimersByTimeAsync(9000);
    expect(sent.map((s) => s.fields.due)).toEqual([T0 / 1000, T0 / 1000 + 30]);
    table.remove('t');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sent).toHaveLength(2);
  });

  it('retries a failed occurrence with back-off, and the next occurrence supersedes it', async () => {
    results = [
      { ok: false, error: 'status: DOWN' },
      { ok: false, error: 'status: DOWN' },
      { ok: true, id: 'x' },
    ];
    table.define('t', 't.json', def(60));
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(1000);
    await vi.advanceTimersByTimeAsync(2000);
    expect(sent.map((s) => [s.at - T0, s.fields.due])).toEqual([
      [0, T0 / 1000],
      [1000, T0 / 1000],
      [3000, T0 / 1000],
    ]);
    expect(stats).toEqual({ sent: 1, errors: 2, invalid: 0 });

    // Always failing: retries at +1, +3, +7, +15, +31 s; the one at +63 s would pass the next
    // occurrence at +60 s, which supersedes it: never two messages for one occurrence.
    results = Array.from({ length: 20 }, () => ({ ok: false as const, error: 'no reply' }));
    sent.length = 0;
    await vi.advanceTimersByTimeAsync(57_000);
    const dues = sent.map((s) => s.fields.due! - T0 / 1000);
    expect(dues).toEqual([60]);
    await vi.advanceTimersByTimeAsync(100_000);
    const times = sent.map((s) => (s.at - T0) / 1000);
    expect(times).toEqual([60, 61, 63, 67, 75, 91, 120, 121, 123, 127, 135, 151]);
    expect(sent.map((s) => s.fields.due! - T0 / 1000)).toEqual([60, 60, 60, 60, 60, 60, 120, 120, 120, 120, 120, 120]);
  });

  it('lists a timer whose last delivery failed, with the occurrence and the error, until one succeeds, its file changes or it is suspended', async () => {
    table.define('b', 'b.json', def(60));
    table.define('a', 'a.json', { period: 60, msg: { dest: 'nosuch' } });
    results = [
      { ok: false, error: 'status: DOWN' },
      { ok: false, error: 'queue nosuch not found' },
    ];
    await vi.advanceTimersByTimeAsync(0);
    // Both fired at T0 and failed: listed by file name, whatever the order of their fires.
    expect(table.undelivered()).toEqual([
      { file: 'a.json', occurrence: T0 / 1000, error: 'queue nosuch not found' },
      { file: 'b.json', occurrence: T0 / 1000, error: 'status: DOWN' },
    ]);
    // b's retry a second later is delivered; a's fails again.
    results = [
      { ok: true, id: 'x' },
      { ok: false, error: 'queue nosuch not found' },
    ];
    await vi.advanceTimersByTimeAsync(1000);
    expect(table.undelivered()).toEqual([{ file: 'a.json', occurrence: T0 / 1000, error: 'queue nosuch not found' }]);
    // A new definition has not failed yet; nor has a suspended timer.
    table.define('a', 'a.json', def(60));
    expect(table.undelivered()).toEqual([]);
    results = [{ ok: false, error: 'no reply' }];
    await vi.advanceTimersByTimeAsync(2000);
    expect(table.undelivered()).toEqual([{ file: 'a.json', occurrence: T0 / 1000, error: 'no reply' }]);
    table.suspend('a');
    expect(table.undelivered()).toEqual([]);
  });

  it('sends nothing more for a timer while its delivery is in flight', async () => {
    let release: (r: DeliveryResult) => void = () => undefined;
    const slow = new TimerTable({
      deliver: (fields) => {
        sent.push({ fields, at: Date.now() });
        return new Promise((r) => (release = r));
      },
      stats,
      log: silentLogger(),
    });
    slow.define('t', 't.json', def(1));
    await vi.advanceTimersByTimeAsync(3500);
    expect(sent).toHaveLength(1);
    release({ ok: true, id: 'x' });
    await vi.advanceTimersByTimeAsync(0);
    // The in-flight fire ends past three occurrences: one message, for the latest.
    expect(sent.map((s) => s.fields.due! - T0 / 1000)).toEqual([0, 3]);
    release({ ok: true, id: 'y' });
    await slow.close();
  });
});
