import { describe, expect, it } from 'vitest';
import { parseArgs } from '../src/args.js';

describe('parseArgs (classic rules)', () => {
  it('takes the first word as the command and --k=v, --k v, --k', () => {
    const a = parseArgs(['sendmesg', '--dest', 'test', '--param1=a=b', '--relay-ok', '--src', 'me']);
    expect(a.command).toBe('sendmesg');
    expect({ ...a.opts }).toEqual({ dest: 'test', param1: 'a=b', 'relay-ok': true, src: 'me' });
    expect(a.rest).toEqual([]);
  });

  it('makes --k a flag when the next word is an option or there is none', () => {
    expect({ ...parseArgs(['x', '--force_remote', '--dest', 'q']).opts }).toEqual({ force_remote: true, dest: 'q' });
    expect({ ...parseArgs(['x', '--verbose']).opts }).toEqual({ verbose: true });
  });

  it('keeps values that start with a single dash or contain --', () => {
    expect({ ...parseArgs(['x', '--due', '-5', '--param1', 'a--b']).opts }).toEqual({ due: '-5', param1: 'a--b' });
    expect({ ...parseArgs(['x', '--param1=']).opts }).toEqual({ param1: '' });
  });

  it('reads --no-k as false without taking a value', () => {
    const a = parseArgs(['--no-allow-new-queue', 'stray', '--force'], { command: false });
    expect(a.command).toBeUndefined();
    expect({ ...a.opts }).toEqual({ 'allow-new-queue': false, force: true });
    expect(a.rest).toEqual(['stray']);
    expect({ ...parseArgs(['x', '--no-k=v']).opts }).toEqual({ 'no-k': 'v' });
  });

  it('returns words that are neither options nor values in rest, later options win', () => {
    const a = parseArgs(['state', 'junk', '--msg_id', 'A', '-h', '--msg_id', 'B']);
    expect(a.rest).toEqual(['junk', '-h']);
    expect(a.opts.msg_id).toBe('B');
  });

  it('has no command when the first word is an option, and stops at a bare --', () => {
    const a = parseArgs(['--dest', 'q']);
    expect(a.command).toBeUndefined();
    expect(a.opts.dest).toBe('q');
    expect(parseArgs([]).command).toBeUndefined();
    const b = parseArgs(['cmd', '--a', '--', '--b', 'c']);
    expect({ ...b.opts }).toEqual({ a: true });
    expect(b.rest).toEqual(['--b', 'c']);
  });

  it('a bare -- as the first word is no command: every word after it is rest, options included', () => {
    const a = parseArgs(['--', 'sendmesg', '--dest', 'q']);
    expect(a.command).toBeUndefined();
    expect({ ...a.opts }).toEqual({});
    expect(a.rest).toEqual(['sendmesg', '--dest', 'q']);
    // Any other first word, even an empty one, is the command word (`rq ""` is an unknown command).
    expect(parseArgs(['', '--dest', 'q'])).toMatchObject({ command: '', rest: [] });
  });

  it('treats the first word as an ordinary word when there is no command', () => {
    expect(parseArgs(['word', '--k', 'v'], { command: false })).toMatchObject({ command: undefined, rest: ['word'] });
  });

  it('cannot be tricked into setting a prototype', () => {
    const a = parseArgs(['x', '--__proto__', 'v', '--constructor']);
    expect(Object.getPrototypeOf(a.opts)).toBeNull();
    expect(a.opts['__proto__']).toBe('v');
    expect(a.opts.constructor).toBe(true);
  });
});
