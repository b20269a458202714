// The one decision of a run's end (rules/run-end.ts) over the complete grid of its facts, each cell checked against the rules as the specs state them.
import { describe, expect, it } from 'vitest';
import { RETRY_DEFAULTS } from '../../../src/message/job-fields.js';
import type { CancelRecord } from '../../../src/message/message.js';
import type { Completion } from '../../../src/queue/rules/completion.js';
import { type RunEnd, type RunFacts, decideRunEnd } from '../../../src/queue/rules/run-end.js';

const COMPLETIONS: (Completion | null)[] = [
  null,
  { kind: 'done' },
  { kind: 'relayed' },
  { kind: 'err' },
  { kind: 'resend', delay: 0 },
  { kind: 'resend', delay: 30 },
  { kind: 'retry', delay: null, reason: 'busy' },
  { kind: 'retry', delay: 7, reason: '' },
  { kind: 'fatal', text: 'bad input' },
];
const EXITS = [
  { code: 0, signal: null },
  { code: 3, signal: null },
  { code: null, signal: 'SIGKILL' as const },
];
const KILLS: RunFacts['killed'][] = [null, { kind: 'timeout', text: 'TIMEOUT after 1s' }, { kind: 'destroyed', text: null }];
const CANCELS: (CancelRecord | null)[] = [
  null,
  { at: '2026-01-01T00:00:00Z', by: 'cli:op', reason: 'stop it' },
  { at: '2026-01-01T00:00:00Z', by: 'web', reason: 'gone', purge: true },
];
/** failures so far, and max_retries. */
const ATTEMPTS = [
  [0, 0],
  [0, 2],
  [1, 2],
  [2, 2],
];
const COUNTS = [
  [1, 3],
  [3, 3],
];

function* grid(): Generator<RunFacts> {
  for (const stopping of [false, true])
    for (const completion of COMPLETIONS)
      for (const exit of EXITS)
        for (const killed of KILLS)
          for (const cancel of CANCELS)
            for (const [failures, max] of ATTEMPTS)
              for (const [count, maxCount] of COUNTS)
                yield {
                  stopping,
                  completion,
                  pid: 42,
                  ...exit,
                  count,
                  maxCount,
                  killed,
                  jobStatus: 'working',
                  cancel,
                  failures,
                  retry: { ...RETRY_DEFAULTS, max_retries: max, retry_jitter: 0 },
                  random: 0.5,
                };
}

const name = (f: RunFacts) =>
  JSON.stringify({
    s: f.stopping,
    c: f.completion,
    code: f.code,
    sig: f.signal,
    k: f.killed?.kind,
    x: !!f.cancel,
    p: f.cancel?.purge,
    n: [f.failures, f.retry.max_retries],
    cnt: [f.count, f.maxCount],
  });

/** The rules, stated as the specs state them (spec §3.3–3.4, rq-beyond §B3, §B5, §B13), not as the code computes them. */
function expected(f: RunFacts): RunEnd['kind'] {
  if (f.stopping) return 'interrupted';
  const clean = f.code === 0 && f.signal === null;
  const c = f.completion?.kind;
  // A script that said done or relayed and exited 0 finished its work: neither a kill nor a cancel undoes that.
  if (clean && (c === 'done' || c === 'relayed')) return 'finished';
  if (f.cancel) return 'cancelled';
  // Without a retry policy the classic rules decide: a resend under its limit goes back to the que, anything else ends.
  const classic = clean && c === 'resend' && f.count < f.maxCount ? 'resend' : 'finished';
  // A kill by rq names the failure; else the script's own line does; a resend that hit its limit is no failure.
  const kind = f.killed?.kind ?? (c === 'fatal' || c === 'retry' ? c : clean && c === 'resend' ? null : 'exit');
  if (kind === null) return classic;
  if (kind === 'fatal') return 'failed';
  if (f.failures < f.retry.max_retries) return 'retry';
  if (f.retry.max_retries > 0 || kind === 'retry' || kind === 'timeout') return 'failed';
  return classic;
}

describe('decideRunEnd over the whole grid', () => {
  const cells = [...grid()];

  it(`every one of the ${cells.length} cells lands where the rules say`, () => {
    const wrong = cells.filter((f) => decideRunEnd(f).kind !== expected(f)).map((f) => `${name(f)} → ${decideRunEnd(f).kind}, expected ${expected(f)}`);
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(cells.length).toBe(2 * 9 * 3 * 3 * 3 * 4 * 2);
  });

  it("a retry is the next attempt, after the script's own delay when it gave one, and never past max_retries", () => {
    for (const f of cells) {
      const end = decideRunEnd(f);
      if (end.kind !== 'retry') continue;
      expect(end.decision.attempt).toBe(f.failures + 1);
      expect(end.decision.attempt).toBeLessThanOrEqual(f.retry.max_retries);
      if (f.completion?.kind === 'retry' && f.completion.delay !== null && !f.killed) expect(end.decision.delay).toBe(7);
      else expect(end.decision.delay).toBe(2 ** f.failures);
      expect(end.decision.status).toMatch(/^RETRY \d\/2 IN \d+s - ./);
    }
  });

  it('a failure not retried says why: fatal with its text, exhausted with the count, a timeout as failed', () => {
    for (const f of cells) {
      const end = decideRunEnd(f);
      if (end.kind !== 'failed') continue;
      if (f.completion?.kind === 'fatal' && !f.killed) expect(end).toMatchObject({ outcome: 'fatal', status: 'bad input', failure: { kind: 'fatal' } });
      else if (f.retry.max_retries > 0 || (!f.killed && f.completion?.kind === 'retry')) expect(end.status).toMatch(/^RETRIES EXHAUSTED \(\d\) - ./);
      else expect(end).toMatchObject({ outcome: 'failed', status: 'TIMEOUT after 1s', failure: { kind: 'timeout' } });
    }
  });

  it('a cancel ends in cancelled with its reason, purged when asked; one that came after the work was done is only noted', () => {
    for (const f of cells) {
      const end = decideRunEnd(f);
      if (end.kind === 'cancelled') expect(end).toEqual({ kind: 'cancelled', status: `CANCELLED - ${f.cancel!.reason}`, purge: f.cancel!.purge === true });
      if (end.kind === 'finished' || end.kind === 'resend') expect(end.cancelTooLate).toBe(f.cancel !== null);
    }
  });

  it('the classic endings keep their classic texts', () => {
    const base = cells.find((f) => !f.stopping && !f.killed && !f.cancel && f.retry.max_retries === 0 && f.count === 3)!;
    const at = (c: Completion | null, code: number | null, signal: NodeJS.Signals | null) => decideRunEnd({ ...base, completion: c, code, signal });
    expect(at({ kind: 'done' }, 0, null)).toEqual({ kind: 'finished', outcome: { state: 'done', statusText: null }, cancelTooLate: false });
    expect(at({ kind: 'resend', delay: 30 }, 0, null)).toMatchObject({
      kind: 'finished',
      outcome: { state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' },
    });
    expect(at({ kind: 'resend', delay: 30 }, 0, null)).not.toHaveProperty('outcome.failure');
    expect(decideRunEnd({ ...base, count: 1, completion: { kind: 'resend', delay: 30 } })).toEqual({
      kind: 'resend',
      delay: 30,
      status: null,
      cancelTooLate: false,
    });
    expect(at({ kind: 'done' }, 3, null)).toMatchObject({
      kind: 'finished',
      outcome: { state: 'err', statusText: expect.stringMatching(/^PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was done but exit status was /) },
    });
    expect(at(null, 0, null)).toMatchObject({ kind: 'finished', outcome: { state: 'err', statusText: null, failure: 'exit' } });
    expect(decideRunEnd({ ...base, spawnError: 'ENOENT' })).toMatchObject({
      kind: 'finished',
      outcome: { state: 'err', statusText: 'could not start script: ENOENT' },
    });
  });
});
