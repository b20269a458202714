import { describe, expect, it } from 'vitest';
import { LineSplitter, completionOf, decideOutcome, parseDup, parseLine, resendDelay, waitStatusText } from '../../src/queue/pipe-protocol.js';

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
  it('non-zero exit or signal forces err unless err was reported', () => {
    expect(decideOutcome({ kind: 'done' }, 42, 1, null, 0, 15)).toEqual({
      state: 'err',
      statusText: 'PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was done but exit status was pid 42 exit 1',
    });
    expect(decideOutcome(null, 42, null, 'SIGTERM', 0, 15).statusText).toBe(
      'PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was  but exit status was pid 42 SIGTERM (signal 15)',
    );
    expect(decideOutcome({ kind: 'err' }, 42, 3, null, 0, 15)).toEqual({ state: 'err', statusText: null });
  });
  it('clean exit uses the first completion; none means err keeping the last status', () => {
    expect(decideOutcome({ kind: 'done' }, 1, 0, null, 0, 15)).toEqual({ state: 'done', statusText: null });
    expect(decideOutcome({ kind: 'relayed' }, 1, 0, null, 0, 15)).toEqual({ state: 'relayed', statusText: null });
    expect(decideOutcome(null, 1, 0, null, 0, 15)).toEqual({ state: 'err', statusText: null });
  });
  it('resend goes back to que until count reaches max_count', () => {
    expect(decideOutcome({ kind: 'resend', delay: 1 }, 1, 0, null, 1, 15)).toEqual({ state: 'que', statusText: null });
    expect(decideOutcome({ kind: 'resend', delay: 1 }, 1, 0, null, 3, 3)).toEqual({ state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' });
  });
  it('renders wait statuses as Ruby does', () => {
    expect(waitStatusText(8842, 1, null)).toBe('pid 8842 exit 1');
    expect(waitStatusText(7, null, 'SIGKILL')).toBe('pid 7 SIGKILL (signal 9)');
  });
});
