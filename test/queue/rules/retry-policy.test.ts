// The pure rules of rq-beyond §B3: backoff arithmetic, the decision grid, the retry line and the failure kinds of a reaped run.
import { describe, expect, it } from 'vitest';
import { RETRY_DEFAULTS, type RetrySettings } from '../../../src/message/job-fields.js';
import { decideOutcome } from '../../../src/queue/rules/completion.js';
import { retryRequest } from '../../../src/queue/rules/pipe-protocol.js';
import { type Failure, attemptOf, retryDelay, decideFailure, lastFailureEnv, retrySettings } from '../../../src/queue/rules/retry-policy.js';
import { seededRandom } from '../../helpers/seeded-random.mjs';

const settings = (over: Partial<RetrySettings> = {}): RetrySettings => ({ ...RETRY_DEFAULTS, ...over });
const fail = (kind: Failure['kind'], over: Partial<Failure> = {}): Failure => ({ kind, text: 'boom', code: 1, signal: null, ...over });

describe('retryDelay', () => {
  it("with jitter 0 is Raquel's series: 1, 2, 4 … s, capped at max_retry_delay", () => {
    const s = settings({ retry_jitter: 0 });
    expect([1, 2, 3, 4, 5, 10].map((n) => retryDelay(n, s, 0.99))).toEqual([1, 2, 4, 8, 16, 512]);
    expect(retryDelay(17, s, 0)).toBe(43_200);
    expect(retryDelay(40, s, 0)).toBe(43_200);
  });

  it('scales with backoff_base and never goes below min_retry_delay', () => {
    expect(retryDelay(3, settings({ backoff_base: 0.5, retry_jitter: 0 }), 0)).toBe(2);
    expect(retryDelay(1, settings({ backoff_base: 0.1, min_retry_delay: 0.25, retry_jitter: 0 }), 0)).toBe(0.25);
    expect(retryDelay(1, settings({ backoff_base: 0.1, min_retry_delay: 0, retry_jitter: 0 }), 0)).toBe(0.1);
  });

  it('with jitter 0.5 stays within [d/2, d] over 1000 seeded draws, and uses the whole range', () => {
    const r = seededRandom();
    const s = settings({ backoff_base: 4, min_retry_delay: 0 });
    const draws = Array.from({ length: 1000 }, () => retryDelay(3, s, r.next()));
    expect(Math.min(...draws), r.replay).toBeGreaterThanOrEqual(8);
    expect(Math.max(...draws), r.replay).toBeLessThanOrEqual(16);
    expect(Math.max(...draws) - Math.min(...draws), r.replay).toBeGreaterThan(7);
    expect(retryDelay(3, s, 0)).toBe(16);
  });
});

describe('decideFailure: every kind × failures at max−1, max, max+1', () => {
  const KINDS: Failure['kind'][] = ['err', 'exit', 'retry', 'timeout', 'stalled', 'destroyed', 'spawn', 'internal'];
  const s = settings({ max_retries: 3, retry_jitter: 0 });
  it.each(KINDS)('%s', (kind) => {
    // failures before this run: 2 → attempt 3 ≤ 3 retries; 3 → exhausted; 4 (a crash overshoot) → exhausted.
    expect(decideFailure(fail(kind), 2, s, 0)).toEqual({ action: 'retry', attempt: 3, of: 3, delay: 4, status: 'RETRY 3/3 IN 4s - boom' });
    expect(decideFailure(fail(kind), 3, s, 0)).toEqual({ action: 'finish', outcome: 'exhausted', status: 'RETRIES EXHAUSTED (3) - boom' });
    expect(decideFailure(fail(kind), 4, s, 0)).toEqual({ action: 'finish', outcome: 'exhausted', status: 'RETRIES EXHAUSTED (3) - boom' });
  });

  it('without a budget: classic for classic kinds, failed for timeout, stall and oom, exhausted for a retry line', () => {
    const none = settings();
    for (const kind of ['err', 'exit', 'destroyed', 'spawn', 'internal'] as const) expect(decideFailure(fail(kind), 0, none, 0)).toEqual({ action: 'classic' });
    expect(decideFailure(fail('timeout', { text: 'TIMEOUT - x' }), 0, none, 0)).toEqual({ action: 'finish', outcome: 'failed', status: 'TIMEOUT - x' });
    expect(decideFailure(fail('stalled', { text: 'STALLED - y' }), 0, none, 0)).toEqual({ action: 'finish', outcome: 'failed', status: 'STALLED - y' });
    expect(decideFailure(fail('oom', { text: 'OOM - z' }), 0, none, 0)).toEqual({ action: 'finish', outcome: 'failed', status: 'OOM - z' });
    expect(decideFailure(fail('retry'), 0, none, 0)).toEqual({ action: 'finish', outcome: 'exhausted', status: 'RETRIES EXHAUSTED (0) - boom' });
  });

  it('fatal is never retried; a retry N delay wins over the backoff', () => {
    expect(decideFailure(fail('fatal', { text: 'corrupt' }), 0, settings({ max_retries: 9 }), 0)).toEqual({
      action: 'finish',
      outcome: 'fatal',
      status: 'corrupt',
    });
    expect(decideFailure(fail('retry', { delay: 30 }), 0, settings({ max_retries: 2 }), 0)).toMatchObject({
      action: 'retry',
      delay: 30,
      status: 'RETRY 1/2 IN 30s - boom',
    });
    expect(decideFailure(fail('retry', { delay: 0 }), 0, settings({ max_retries: 2 }), 0)).toMatchObject({ action: 'retry', delay: 0 });
  });
});

describe('attemptOf', () => {
  it('is 1 for a first run, one more per counted failure', () => {
    const msg = { msg_id: 'x', orig_msg_id: 'x', count: 0, max_count: 15, due: 0, dest: 'q' };
    expect([attemptOf(msg), attemptOf({ ...msg, failures: 2 })]).toEqual([1, 3]);
  });
});

describe('retrySettings: message over queue over default', () => {
  it('resolves each field on its own', () => {
    const msg = { msg_id: 'x', orig_msg_id: 'x', count: 0, max_count: 15, due: 0, dest: 'q', max_retries: 2 };
    expect(retrySettings(msg, { retry: { max_retries: 5, backoff_base: 3 } })).toEqual({ ...RETRY_DEFAULTS, max_retries: 2, backoff_base: 3 });
    expect(retrySettings(msg, {})).toEqual({ ...RETRY_DEFAULTS, max_retries: 2 });
  });
});

describe('retryRequest (the retry line)', () => {
  it.each([
    [null, { delay: null, reason: '' }],
    ['30', { delay: 30, reason: '' }],
    ['2.5-rate limited', { delay: 2.5, reason: 'rate limited' }],
    ['-later', { delay: null, reason: 'later' }],
    ['soon please', { delay: null, reason: 'soon please' }],
    ['5 more', { delay: null, reason: '5 more' }],
    // The line arrives with whatever spaces the script wrote; the reason the status and last_failure
    // show is without them (nothing left: the run reads 'retry requested', not a blank reason).
    ['5- rate limited  ', { delay: 5, reason: 'rate limited' }],
    ['5-   ', { delay: 5, reason: '' }],
  ])('%j', (arg, want) => expect(retryRequest(arg)).toEqual(want));
});

describe('decideOutcome: the failure kind of a reaped run', () => {
  it.each([
    [{ kind: 'err' as const }, 0, null, 'err'],
    [{ kind: 'err' as const }, 3, null, 'err'],
    [{ kind: 'done' as const }, 1, null, 'exit'],
    [null, 0, null, 'exit'],
    [{ kind: 'done' as const }, null, 'SIGKILL' as const, 'exit'],
    [{ kind: 'retry' as const, delay: null, reason: '' }, 7, null, 'retry'],
    [{ kind: 'fatal' as const, text: '' }, 0, null, 'fatal'],
    [{ kind: 'done' as const }, 0, null, undefined],
    [{ kind: 'resend' as const, delay: 0 }, 0, null, undefined],
  ])('%j exit %s signal %s → %s', (first, code, signal, kind) => {
    expect(decideOutcome(first, 1, code, signal, 15, 15).failure).toBe(kind);
  });
});

describe('lastFailureEnv', () => {
  it('turns control characters into spaces and cuts at 1000 bytes without splitting a character', () => {
    expect(lastFailureEnv('a\nb\tc\u0000d')).toBe('a b c d');
    const cut = lastFailureEnv('é'.repeat(600));
    expect(Buffer.byteLength(cut)).toBe(1000);
    expect(lastFailureEnv('x' + 'é'.repeat(600))).toBe('x' + 'é'.repeat(499));
  });

  it('drops only the half character at the cut: a U+FFFD the text really holds stays', () => {
    expect(lastFailureEnv('bad byte \uFFFD')).toBe('bad byte \uFFFD');
    const exactly = 'x'.repeat(997) + '\uFFFD';
    expect(lastFailureEnv(exactly)).toBe(exactly);
    expect(lastFailureEnv('\uFFFD' + 'é'.repeat(600))).toBe('\uFFFD' + 'é'.repeat(498));
  });
});
