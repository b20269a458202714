import { describe, expect, it } from 'vitest';
import { LineSplitter, parseDup, parseLine, resendDelay } from '../../src/queue/pipe-protocol.js';
import { completionOf, decideOutcome, waitStatusText } from '../../src/queue/completion.js';

describe('parseLine', () => {
  it('splits at the first space and gives null without one', () => {
    expect(parseLine('done all good here')).toEqual({ keyword: 'done', arg: 'all good here' });
    expect(parseLine('done')).toEqual({ keyword: 'done', arg: null });
    expect(parseLine('run ')).toEqual({ keyword: 'run', arg: '' });
  });
});

describe('LineSplitter', () => {
  it('keeps partial lines across reads and strips CR', () => {
    const s = new LineSplitter();
    const enc = new TextEncoder();
    expect(s.push(enc.encode('do'))).toEqual([]);
    expect(s.push(enc.encode('ne ok\r\nrun 1\nru'))).toEqual(['done ok', 'run 1']);
    expect(s.push(enc.encode('n 2\n'))).toEqual(['run 2']);
    expect(s.end()).toEqual([]);
  });
  it('keeps a multibyte character split between reads and flushes a last line without newline', () => {
    const s = new LineSplitter();
    const bytes = new TextEncoder().encode('run héllo\ndone é');
    const cut = 6; // inside the two bytes of é
    expect(s.push(bytes.slice(0, cut))).toEqual([]);
    expect(s.push(bytes.slice(cut))).toEqual(['run héllo']);
    expect(s.end()).toEqual(['done é']);
  });
});

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
  it('parses resend delays and dup requests', () => {
    expect(resendDelay('10')).toBe(10);
    expect(resendDelay('10-because')).toBe(10);
    expect(resendDelay('x')).toBeNull();
    expect(parseDup('0-X-other')).toEqual({ delay: 0, dest: 'other' });
    expect(parseDup('5-X-http://h:1/q/a-b')).toEqual({ delay: 5, dest: 'http://h:1/q/a-b' });
    expect(parseDup('nope')).toBeNull();
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

/** [first completion line on fd 3 (null: none), ending, counts, expected state, expected status text (null: the script's own)] */
const GRID: [string | null, Ending, number[], string, string | null][] = [
  ['done all good', 'exit 0', ANY_COUNT, 'done', null],
  ['done all good', 'exit 3', ANY_COUNT, 'err', improper('done', EXIT3)],
  ['done all good', 'SIGKILL', ANY_COUNT, 'err', improper('done', KILLED)],
  ['err by design', 'exit 0', ANY_COUNT, 'err', null],
  ['err by design', 'exit 3', ANY_COUNT, 'err', null],
  ['err by design', 'SIGKILL', ANY_COUNT, 'err', null],
  // `fails` records completion err, so it is exempt from rule 1 like err.
  ['fails old spelling', 'exit 0', ANY_COUNT, 'err', null],
  ['fails old spelling', 'exit 3', ANY_COUNT, 'err', null],
  ['fails old spelling', 'SIGKILL', ANY_COUNT, 'err', null],
  ['relayed http://h/q/x/1', 'exit 0', ANY_COUNT, 'relayed', null],
  ['relayed http://h/q/x/1', 'exit 3', ANY_COUNT, 'err', improper('relayed', EXIT3)],
  ['relayed http://h/q/x/1', 'SIGKILL', ANY_COUNT, 'err', improper('relayed', KILLED)],
  ['resend 5-later', 'exit 0', [MAX - 1], 'que', null],
  ['resend 5-later', 'exit 0', [MAX, MAX + 1], 'err', MAX_RESEND],
  // A resend is honoured only after exit 0: a failed or killed script goes to err whatever its count.
  ['resend 5-later', 'exit 3', ANY_COUNT, 'err', improper('resend', EXIT3)],
  ['resend 5-later', 'SIGKILL', ANY_COUNT, 'err', improper('resend', KILLED)],
  [null, 'exit 0', ANY_COUNT, 'err', null],
  [null, 'exit 3', ANY_COUNT, 'err', improper('', EXIT3)],
  [null, 'SIGKILL', ANY_COUNT, 'err', improper('', KILLED)],
];
const CASES = GRID.flatMap(([line, ending, counts, state, status]) => counts.map((count) => [line ?? '(no completion)', ending, count, state, status] as const));

describe('decideOutcome grid (spec §3.3, §3.4)', () => {
  it('covers every verb × ending × count', () => {
    expect(CASES).toHaveLength(6 * 3 * 3);
  });
  it.each(CASES)('%s, then %s, count %i of max_count 3 → %s %s', (line, ending, count, state, status) => {
    const first = line === '(no completion)' ? null : completionOf(parseLine(line));
    if (line !== '(no completion)') expect(first, 'the line must record a completion').not.toBeNull();
    const { code, signal } = ENDINGS[ending];
    expect(decideOutcome(first, PID, code, signal, count, MAX)).toEqual({ state, statusText: status });
  });
});
