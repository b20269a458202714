// failureOf (rules/run-end.ts): the kind and the words of the failure a reaped run amounts to, never an empty text, and which runs are no failure.
import { describe, expect, it } from 'vitest';
import type { Completion, Outcome } from '../../../src/queue/rules/completion.js';
import { type RunFacts, failureOf } from '../../../src/queue/rules/run-end.js';

type Facts = Pick<RunFacts, 'killed' | 'completion' | 'jobStatus' | 'code' | 'signal'>;
const facts = (over: Partial<Facts> = {}): Facts => ({ killed: null, completion: null, jobStatus: null, code: 3, signal: null, ...over });
const err = (over: Partial<Outcome> = {}): Outcome => ({ state: 'err', statusText: null, failure: 'exit', ...over });
const destroyed = { kind: 'destroyed' as const, text: null };

describe('a kill by rq', () => {
  it('names the failure by the kill, in the first words there are: the kill text, rq’s reason, the status, the last line, else destroyed', () => {
    const timeout = { kind: 'timeout' as const, text: 'TIMEOUT after 1s' };
    expect(failureOf(facts({ killed: timeout, signal: 'SIGTERM', code: null }), err({ reason: 'r' }))).toEqual({
      kind: 'timeout',
      text: 'TIMEOUT after 1s',
      code: null,
      signal: 'SIGTERM',
    });
    expect(failureOf(facts({ killed: destroyed, jobStatus: 'working' }), err({ reason: 'r', statusText: 's' }))?.text).toBe('r');
    expect(failureOf(facts({ killed: destroyed, jobStatus: 'working' }), err({ statusText: 's' }))?.text).toBe('s');
    expect(failureOf(facts({ killed: destroyed, jobStatus: 'working' }), err())?.text).toBe('working');
    expect(failureOf(facts({ killed: destroyed, jobStatus: '' }), err())).toEqual({ kind: 'destroyed', text: 'destroyed', code: 3, signal: null });
  });

  it('is still a failure when the run had not failed by itself, and none once its work was done or relayed', () => {
    expect(failureOf(facts({ killed: destroyed }), { state: 'que', statusText: null })?.kind).toBe('destroyed');
    expect(failureOf(facts({ killed: destroyed, code: 0 }), { state: 'done', statusText: null })).toBeNull();
    expect(failureOf(facts({ killed: destroyed, code: 0 }), { state: 'relayed', statusText: null })).toBeNull();
  });
});

describe("the script's own failure", () => {
  it('none when the outcome names no failure', () => {
    expect(failureOf(facts({ code: 0 }), { state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' })).toBeNull();
  });

  it('retry: its reason and delay, or "retry requested" and no delay', () => {
    const retry = (c: Completion | null) => failureOf(facts({ completion: c }), err({ failure: 'retry' }));
    expect(retry({ kind: 'retry', delay: 7, reason: 'busy' })).toEqual({ kind: 'retry', text: 'busy', code: 3, signal: null, delay: 7 });
    expect(retry({ kind: 'retry', delay: null, reason: '' })).toEqual({ kind: 'retry', text: 'retry requested', code: 3, signal: null });
    expect(retry({ kind: 'retry', delay: 0, reason: 'now' })).toMatchObject({ delay: 0 });
    expect(retry(null)).toEqual({ kind: 'retry', text: 'retry requested', code: 3, signal: null });
    expect(retry({ kind: 'fatal', text: 'x' })).toEqual({ kind: 'retry', text: 'retry requested', code: 3, signal: null });
  });

  it('fatal: its text, or FATAL', () => {
    const fatal = (c: Completion | null) => failureOf(facts({ completion: c, signal: 'SIGKILL' }), err({ failure: 'fatal' }));
    expect(fatal({ kind: 'fatal', text: 'bad input' })).toEqual({ kind: 'fatal', text: 'bad input', code: 3, signal: 'SIGKILL' });
    expect(fatal({ kind: 'fatal', text: '' })?.text).toBe('FATAL');
    expect(fatal({ kind: 'retry', delay: null, reason: 'r' })?.text).toBe('FATAL');
    expect(fatal(null)?.text).toBe('FATAL');
  });

  it('any other: rq’s reason, the status, the last line, else words for err or for an exit without a completion line', () => {
    expect(failureOf(facts({ jobStatus: 'last' }), err({ reason: 'r', statusText: 's' }))).toEqual({ kind: 'exit', text: 'r', code: 3, signal: null });
    expect(failureOf(facts({ jobStatus: 'last' }), err({ statusText: 's' }))?.text).toBe('s');
    expect(failureOf(facts({ jobStatus: 'last' }), err())?.text).toBe('last');
    expect(failureOf(facts({ jobStatus: '' }), err({ failure: 'err' }))).toEqual({ kind: 'err', text: 'the script reported err', code: 3, signal: null });
    expect(failureOf(facts(), err())?.text).toBe('exit status 3 without a completion line');
    expect(failureOf(facts({ code: null, signal: 'SIGKILL' }), err())?.text).toBe('killed by SIGKILL without a completion line');
  });
});
