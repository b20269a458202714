// The Timeline in words: every kind of history line a queue writes (moves, run ends, retries, events) reads as a step, a reason and details, never raw JSON or an empty origin.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HistoryLine } from '../../src/ipc/history-line.js';
import { EVENT_WORDS, detailWords, exitWords, reasonWords, stepWords, usageWords } from '../../src/ipc/history-words.js';
import { timelineView } from '../../src/web/views/timeline-view.js';
import { PROJECT } from '../helpers/rq-root.js';

const at = '2026-12-01T10:00:00.000Z';
const exit = (code: number | null, signal: string | null, wall_ms: number) => ({ code, signal, wall_ms });

/** Each kind of line as its writer in src/spool or src/queue writes it (keys in their order), and what the Timeline says: step, reason, details. */
const KINDS: [string, Omit<HistoryLine, 'at'>, string, string, string][] = [
  ['create (implied by the id, spool/history.ts)', { from: null, to: 'que', actor: 'create' }, 'created → que', '', ''],
  ['create of a prep message', { from: null, to: 'prep', actor: 'create' }, 'created → prep', '', ''],
  ['commit', { from: 'prep', to: 'que', actor: 'commit' }, 'prep → que', '', ''],
  ['start (runs.ts)', { from: 'que', to: 'run', actor: 'dispatcher', pid: 4242, attempt: 2 }, 'que → run', '', 'pid 4242, attempt 2'],
  ['refused start', { from: 'run', to: 'que', actor: 'dispatcher', reason: 'script not executable' }, 'run → que', 'script not executable', ''],
  ['stopped by a shutdown', { from: 'run', to: 'run', actor: 'shutdown', reason: 'interrupted' }, 'stays in run', 'interrupted', ''],
  ['back to que at restart', { from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' }, 'run → que', 'interrupted', ''],
  [
    'done',
    { from: 'run', to: 'done', actor: 'script', exit: exit(0, null, 1050), reason: 'exit 0: done greeted' },
    'run → done',
    'done greeted',
    'exit 0 after 1.1s',
  ],
  ['err, exit 3', { from: 'run', to: 'err', actor: 'script', exit: exit(3, null, 12), reason: 'exit 3' }, 'run → err', '', 'exit 3 after 0.012s'],
  [
    'killed',
    { from: 'run', to: 'err', actor: 'script', exit: exit(null, 'SIGKILL', 31), reason: 'exit SIGKILL' },
    'run → err',
    '',
    'killed by SIGKILL after 0.031s',
  ],
  [
    'relayed',
    { from: 'run', to: 'relayed', actor: 'script', exit: exit(0, null, 80), reason: 'exit 0: relayed - http://h:3333/q/a/1' },
    'run → relayed',
    'relayed - http://h:3333/q/a/1',
    'exit 0 after 0.080s',
  ],
  ['resend', { from: 'run', to: 'que', actor: 'script', exit: exit(0, null, 5), reason: 'resend 30' }, 'run → que', 'resend 30', 'exit 0 after 0.005s'],
  [
    'retry (transitions/run-moves.ts)',
    {
      from: 'run',
      to: 'que',
      actor: 'retry',
      failure: 'exit',
      retry: 2,
      of: 3,
      delay_s: 4,
      due: 1764583204.5,
      exit: exit(1, null, 500),
      reason: 'exit 1 without a completion line',
    },
    'run → que',
    'exit 1 without a completion line',
    'failure: exit, retry 2 of 3 in 4s, exit 1 after 0.500s',
  ],
  [
    'finished to err',
    { from: 'run', to: 'err', actor: 'script', outcome: 'failed', failure: 'err', exit: exit(0, null, 20), reason: 'err - bad input' },
    'run → err',
    'err - bad input',
    'outcome failed, failure: err, exit 0 after 0.020s',
  ],
  [
    'cancelled in que',
    { from: 'que', to: 'err', actor: 'web:127.0.0.1', outcome: 'cancelled', reason: 'CANCELLED - no longer needed' },
    'que → err',
    'CANCELLED - no longer needed',
    'outcome cancelled',
  ],
  [
    'cancelled while running',
    { from: 'run', to: 'err', actor: 'cli', outcome: 'cancelled', exit: exit(null, 'SIGTERM', 2100), reason: 'CANCELLED' },
    'run → err',
    'CANCELLED',
    'outcome cancelled, killed by SIGTERM after 2.1s',
  ],
  [
    'expired',
    { from: 'que', to: 'err', actor: 'expiry', outcome: 'expired', reason: 'EXPIRED - past expire_at' },
    'que → err',
    'EXPIRED - past expire_at',
    'outcome expired',
  ],
  ['outcome found by recovery', { from: 'run', to: 'err', actor: 'recovery', outcome: 'failed', reason: 'err - x' }, 'run → err', 'err - x', 'outcome failed'],
  ['could not proceed', { from: 'que', to: 'err', actor: 'rq', reason: 'unreadable msg' }, 'que → err', 'unreadable msg', ''],
  ['requeue with reset', { from: 'err', to: 'que', actor: 'requeue', reset: true }, 'err → que', '', 'failures reset'],
  [
    'coalesced',
    { from: 'que', to: 'done', actor: 'coalesce', reason: 'duplicate 20261201.1000.00.000.1' },
    'que → done',
    'duplicate 20261201.1000.00.000.1',
    '',
  ],
  ['timeout', { event: 'timeout', after_s: 30 }, 'timed out', '', 'after 30s'],
  ['stall', { event: 'stall', silent_s: 90 }, 'stalled', '', 'silent for 1m 30s'],
  ['cancel requested', { event: 'cancel_requested', actor: 'web:127.0.0.1', reason: 'wrong input' }, 'cancel requested', 'wrong input', ''],
  ['cancel too late', { event: 'cancel_too_late', actor: 'cli' }, 'cancel came too late', '', ''],
  ['priority', { event: 'priority', actor: 'cli', priority: -5 }, 'priority changed', '', 'priority -5'],
  ['reschedule', { event: 'reschedule', actor: 'cli', due: 1764583200 }, 'rescheduled', '', 'due 2025-12-01T10:00:00Z'],
  ['tags', { event: 'tags', actor: 'cli', add: ['nightly', 'vip'], remove: ['old'] }, 'tags changed', '', 'added nightly, vip, removed old'],
  ['limit wait', { event: 'limit_wait', key: 'api:eu', position: 3 }, 'waiting for a limit slot', '', 'key api:eu, number 3 in line'],
  ['limit wait, place unknown', { event: 'limit_wait', key: 'api:eu', position: null }, 'waiting for a limit slot', '', 'key api:eu'],
  ['limit grant', { event: 'limit_grant', key: 'api:eu' }, 'limit slot granted', '', 'key api:eu'],
  [
    'dependency finished',
    { event: 'depends_resolved', ref: 'build/20261201.1000.00.000.1', state: 'err', outcome: 'failed' },
    'dependency finished',
    '',
    'build/20261201.1000.00.000.1 is err, outcome failed',
  ],
  ['dependencies lifted', { event: 'undepend', actor: 'cli', refs: ['a/1', 'b/2'] }, 'dependencies lifted', '', 'a/1, b/2'],
];

describe('the Timeline in words', () => {
  for (const [kind, line, step, reason, details] of KINDS) {
    it(kind, () => {
      const l = { at, ...line } as HistoryLine;
      expect([stepWords(l), reasonWords(l), detailWords(l).join(', ')]).toEqual([step, reason, details]);
      // As the page shows it: no JSON, no placeholder for a missing state.
      const text = timelineView([l]).value.replace(/<[^>]+>/g, ' ');
      for (const raw of ['{', '}', '"', '·', 'null', 'undefined', '[object', ' → ?']) expect(text, raw).not.toContain(raw);
      expect(text).toContain(step);
    });
  }

  it('every event a queue writes into a history has its words', async () => {
    const events = new Set<string>();
    for (const dir of ['src/queue', 'src/spool']) {
      for (const f of await fs.readdir(path.join(PROJECT, dir), { recursive: true })) {
        if (!f.endsWith('.ts')) continue;
        for (const m of (await fs.readFile(path.join(PROJECT, dir, f), 'utf8')).matchAll(/\{ event: '(\w+)'/g)) events.add(m[1]);
      }
    }
    expect(events.size).toBeGreaterThanOrEqual(11);
    expect([...events].filter((e) => !(e in EVENT_WORDS))).toEqual([]);
    expect([...events].filter((e) => !KINDS.some(([, l]) => l.event === e))).toEqual([]);
  });

  it("a run's end reads as its exit code or the signal that killed it", () => {
    expect(exitWords(exit(3, null, 12))).toBe('exit 3 after 0.012s');
    expect(exitWords(exit(null, 'SIGKILL', 40_000))).toBe('killed by SIGKILL after 40s');
    expect(exitWords({ code: null, signal: null })).toBe('no exit status');
    // An unknown detail still reads as words: its name spaced, an object as its pairs.
    expect(detailWords({ at, from: 'run', to: 'err', new_thing: { a: 1, b: [2, 3] } })).toEqual(['new thing a 1, b 2, 3']);
  });

  it('memory_high reads as the time held where rq held the run (cgroup v1), as the times throttled where the kernel did (cgroup v2)', () => {
    const base = { cpu_user_ms: 10, cpu_system_ms: 0, source: 'cgroup' };
    expect(usageWords({ ...base, memory_high_holds: 3, memory_high_held_ms: 412 })).toMatch(/, held 0\.412s at memory_high \(3 times\)$/);
    expect(usageWords({ ...base, memory_high_holds: 1 })).toMatch(/, throttled at memory_high \(1 time\)$/);
  });
});
