// The completion rules (spec §3.3, §3.4): which line counts, and where a run ends for every verb × ending × count.
import { describe, expect, it } from 'vitest';
import { completionOf, decideOutcome, recordCompletion, spawnFailure, waitStatusText } from '../../../src/queue/rules/completion.js';
import type { Message } from '../../../src/message/message.js';
import { parseLine } from '../../../src/queue/rules/pipe-protocol.js';

describe('completions', () => {
  it('maps keywords', () => {
    expect(completionOf(parseLine('done x'))).toEqual({ kind: 'done' });
    expect(completionOf(parseLine('err x'))).toEqual({ kind: 'err' });
    expect(completionOf(parseLine('fails x'))).toEqual({ kind: 'err' });
    expect(completionOf(parseLine('relayed http://h/q/x/1'))).toEqual({ kind: 'relayed' });
    expect(completionOf(parseLine('resend 5-later'))).toEqual({ kind: 'resend', delay: 5 });
    expect(completionOf(parseLine('resend soon'))).toBeNull();
    expect(completionOf(parseLine('fail x'))).toBeNull();
    expect(completionOf(parseLine('run x'))).toBeNull();
  });

  it('the first completion line wins; a resend counts and sets the due when it is read, once', () => {
    const msg = { msg_id: 'm', dest: 'q', count: 2, due: 0 } as Message;
    const first = recordCompletion(null, parseLine('resend 30-later'), msg, 1000);
    expect(first).toEqual({ kind: 'resend', delay: 30 });
    expect(msg).toMatchObject({ count: 3, due: 1030 });
    expect(recordCompletion(first, parseLine('resend 5'), msg, 2000)).toBe(first);
    expect(recordCompletion(first, parseLine('done'), msg, 2000)).toBe(first);
    expect(msg).toMatchObject({ count: 3, due: 1030 });
    const done = { msg_id: 'n', dest: 'q', count: 0, due: 7 } as Message;
    expect(recordCompletion(null, parseLine('run step'), done, 5)).toBeNull();
    expect(recordCompletion(null, parseLine('done ok'), done, 5)).toEqual({ kind: 'done' });
    expect(done).toMatchObject({ count: 0, due: 7 });
  });

  it('a script that could not start ends in err, saying why', () => {
    expect(spawnFailure('spawn /nope ENOENT')).toEqual({ state: 'err', statusText: 'could not start script: spawn /nope ENOENT', failure: 'spawn' });
  });
});

describe('decideOutcome (spec §3.3)', () => {
  it('renders wait statuses as Ruby does', () => {
    expect(waitStatusText(8842, 1, null)).toBe('pid 8842 exit 1');
    expect(waitStatusText(7, null, 'SIGKILL')).toBe('pid 7 SIGKILL (signal 9)');
    expect(waitStatusText(7, null, 'SIGTERM')).toBe('pid 7 SIGTERM (signal 15)');
  });
});

// The full grid of spec §3.3/§3.4, every expectation written out from the spec's words rather
// than from the code: a script's first completion line × how it ended × its count around max_count.
// The count is the one decideOutcome sees, already incremented when a resend line was read.
const PID = 4242;
const MAX = 3;
const ENDINGS = {
  'exit 0': { code: 0, signal: null },
  'exit 3': { code: 3, signal: null },
  SIGKILL: { code: null, signal: 'SIGKILL' },
} as const;
type Ending = keyof typeof ENDINGS;
const improper = (keyword: string, status: string) => `PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was ${keyword} but exit status was ${status}`;
const EXIT3 = `pid ${PID} exit 3`;
const KILLED = `pid ${PID} SIGKILL (signal 9)`;
const MAX_RESEND = 'HIT MAX RESEND COUNT - MOVING TO ERR';
const ANY_COUNT = [MAX - 1, MAX, MAX + 1];

/**
 * [first completion line on fd 3 (null: none), ending, counts, expected state, expected status text
 * (null: the script's own), the failure kind of rq-beyond §B3.1 (undefined: not a failure)]
 */
const GRID: [string | null, Ending, number[], string, string | null, string | undefined][] = [
  ['done all good', 'exit 0', ANY_COUNT, 'done', null, undefined],
  ['done all good', 'exit 3', ANY_COUNT, 'err', improper('done', EXIT3), 'exit'],
  ['done all good', 'SIGKILL', ANY_COUNT, 'err', improper('done', KILLED), 'exit'],
  ['err by design', 'exit 0', ANY_COUNT, 'err', null, 'err'],
  ['err by design', 'exit 3', ANY_COUNT, 'err', null, 'err'],
  ['err by design', 'SIGKILL', ANY_COUNT, 'err', null, 'err'],
  // `fails` records completion err, so it is exempt from rule 1 like err.
  ['fails old spelling', 'exit 0', ANY_COUNT, 'err', null, 'err'],
  ['fails old spelling', 'exit 3', ANY_COUNT, 'err', null, 'err'],
  ['fails old spelling', 'SIGKILL', ANY_COUNT, 'err', null, 'err'],
  ['relayed http://h/q/x/1', 'exit 0', ANY_COUNT, 'relayed', null, undefined],
  ['relayed http://h/q/x/1', 'exit 3', ANY_COUNT, 'err', improper('relayed', EXIT3), 'exit'],
  ['relayed http://h/q/x/1', 'SIGKILL', ANY_COUNT, 'err', improper('relayed', KILLED), 'exit'],
  ['resend 5-later', 'exit 0', [MAX - 1], 'que', null, undefined],
  // The resend limit is not a failure (rq-beyond §B3.1): no retry budget applies to it.
  ['resend 5-later', 'exit 0', [MAX, MAX + 1], 'err', MAX_RESEND, undefined],
  // A resend is honoured only after exit 0: a failed or killed script goes to err whatever its count.
  ['resend 5-later', 'exit 3', ANY_COUNT, 'err', improper('resend', EXIT3), 'exit'],
  ['resend 5-later', 'SIGKILL', ANY_COUNT, 'err', improper('resend', KILLED), 'exit'],
  [null, 'exit 0', ANY_COUNT, 'err', null, 'exit'],
  [null, 'exit 3', ANY_COUNT, 'err', improper('', EXIT3), 'exit'],
  [null, 'SIGKILL', ANY_COUNT, 'err', improper('', KILLED), 'exit'],
  // rq-beyond §B1.6: retry and fatal report a failure whatever the exit, as err does.
  ['retry 5-busy', 'exit 0', ANY_COUNT, 'err', null, 'retry'],
  ['retry 5-busy', 'exit 3', ANY_COUNT, 'err', null, 'retry'],
  ['retry 5-busy', 'SIGKILL', ANY_COUNT, 'err', null, 'retry'],
  ['fatal corrupt input', 'exit 0', ANY_COUNT, 'err', null, 'fatal'],
  ['fatal corrupt input', 'exit 3', ANY_COUNT, 'err', null, 'fatal'],
  ['fatal corrupt input', 'SIGKILL', ANY_COUNT, 'err', null, 'fatal'],
];
const CASES = GRID.flatMap(([line, ending, counts, state, status, failure]) =>
  counts.map((count) => [line ?? '(no completion)', ending, count, state, status, failure] as const),
);

describe('decideOutcome grid (spec §3.3, §3.4)', () => {
  it('covers every verb × ending × count', () => {
    expect(CASES).toHaveLength(8 * 3 * 3);
  });
  it.each(CASES)('%s, then %s, count %i of max_count 3 → %s %s (failure %s)', (line, ending, count, state, status, failure) => {
    const first = line === '(no completion)' ? null : completionOf(parseLine(line));
    if (line !== '(no completion)') expect(first, 'the line must record a completion').not.toBeNull();
    const { code, signal } = ENDINGS[ending];
    const { reason, ...outcome } = decideOutcome(first, PID, code, signal, count, MAX);
    expect(outcome).toEqual({ state, statusText: status, ...(failure ? { failure } : {}) });
    // Beside the classic text, the same failure in rq's words: no double space, no empty keyword, no trailing dash.
    const reported = line === '(no completion)' ? '' : line.split(' ')[0];
    const how = signal ? `killed by ${signal}` : `exit status ${code}`;
    expect(reason).toBe(status?.startsWith('PROCESS EXITED') ? (reported ? `${how} after the script reported ${reported}` : how) : undefined);
  });
});
