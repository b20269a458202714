// check_rq's command line (pure): its documented options read, every other word refused by name.
import { describe, expect, it } from 'vitest';
import { readCheckArgs } from '../../src/cli/check-rq-options.js';

const problem = (...argv: string[]) => {
  const r = readCheckArgs(argv);
  return 'problem' in r ? r.problem : undefined;
};

describe('readCheckArgs', () => {
  it('reads the documented options in their short, long and --name=value forms', () => {
    expect(readCheckArgs(['-s', 'rq.example.com', '-p', '3333', '-t', '50:100:5000:8000', '-u', 'n:p', '-d'])).toEqual({
      opts: { server: 'rq.example.com', port: '3333', thresh: '50:100:5000:8000', user: 'n:p', dump: true },
    });
    expect(readCheckArgs(['--server=h', '--port', '1', '--thresh=1:2:3:4', '--user-file', '/f', '--dump', '--help'])).toEqual({
      opts: { server: 'h', port: '1', thresh: '1:2:3:4', 'user-file': '/f', dump: true, help: true },
    });
    expect(readCheckArgs(['-h'])).toEqual({ opts: { help: true } });
    expect(readCheckArgs([])).toEqual({ opts: {} });
  });

  it('refuses an unknown option by name, as typed: Nagios -H names the option that is the host', () => {
    expect(problem('-H', 'foo.invalid', '-p', '18999')).toBe('unknown option -H (the host is -s HOST or --server HOST); check_rq -h lists the options');
    expect(problem('-Z')).toBe('unknown option -Z; check_rq -h lists the options');
    expect(problem('--x')).toBe('unknown option --x; check_rq -h lists the options');
    expect(problem('--sever=h')).toBe('unknown option --sever (did you mean --server?); check_rq -h lists the options');
    // Only the one-letter forms take one dash; `--s` is no option of check_rq.
    expect(problem('--s', 'h')).toBe('unknown option --s; check_rq -h lists the options');
    expect(problem('-server', 'h')).toBe('unknown option -server; check_rq -h lists the options');
    // Nagios's -P names the option that is the port; --user-file has no one-letter form at all.
    expect(problem('-P', '3333')).toBe('unknown option -P (the port is -p PORT); check_rq -h lists the options');
    expect(problem('-undefined', 'f')).toBe('unknown option -undefined; check_rq -h lists the options');
    // `=` joins a value to a long name only: `-s=h` is no -s.
    expect(problem('-s=h')).toBe('unknown option -s=h; check_rq -h lists the options');
  });

  it('every option is read under its own names, in either form, and nothing else answers to them', () => {
    const forms = [
      ['-s', '--server', 'h'],
      ['-p', '--port', '1'],
      ['-t', '--thresh', '1:2:3:4'],
      ['-u', '--user', 'n:p'],
      [undefined, '--user-file', '/f'],
      ['-d', '--dump', undefined],
      ['-h', '--help', undefined],
    ] as const;
    for (const [short, long, value] of forms) {
      const key = long.slice(2);
      const words = (name: string) => (value === undefined ? [name] : [name, value]);
      if (short) expect(readCheckArgs(words(short))).toEqual({ opts: { [key]: value ?? true } });
      expect(readCheckArgs(words(long))).toEqual({ opts: { [key]: value ?? true } });
      if (value !== undefined) expect(readCheckArgs([`${long}=${value}`])).toEqual({ opts: { [key]: value } });
    }
  });

  it('refuses a stray word, wherever it stands, and after a bare --', () => {
    const stray = 'unexpected argument "extra": check_rq takes no words besides its options (check_rq -h lists them)';
    expect(problem('extra')).toBe(stray);
    expect(problem('-d', 'extra')).toBe(stray);
    expect(problem('-s', 'h', 'extra', '-p', '1')).toBe(stray);
    expect(problem('--', 'extra')).toBe('unexpected argument "--": check_rq takes no words besides its options (check_rq -h lists them)');
    // A lone dash (stdin, to many tools) is a word, not an option.
    expect(problem('-')).toBe('unexpected argument "-": check_rq takes no words besides its options (check_rq -h lists them)');
  });

  it('a value option needs its value: never the next option, never a default in its place', () => {
    expect(problem('-p', '18999', '-s')).toBe('-s: expected HOST, received nothing');
    expect(problem('-s', '-p', '1')).toBe('-s: expected HOST, received the option -p');
    // Nothing that may be a password is echoed: check_rq's line goes to dashboards and alerts.
    expect(problem('-u', 'admin', 'hunter2')).toBe(
      "unexpected argument after -u/--user's value (not shown: it may be part of a password): check_rq takes no words besides its options (check_rq -h lists them)",
    );
    // The same when the password was joined with `=`: an unquoted `--user=admin:correct horse` leaves `horse` as a word.
    expect(problem('--user=admin:correct', 'horse')).toBe(
      "unexpected argument after -u/--user's value (not shown: it may be part of a password): check_rq takes no words besides its options (check_rq -h lists them)",
    );
    expect(problem('--user', '-secretpw')).toBe('--user: expected NAME:PASSWORD, received a word starting with -');
    expect(problem('-u', 'a:b', '-s', 'h', 'extra')).toBe('unexpected argument "extra": check_rq takes no words besides its options (check_rq -h lists them)');
    expect(problem('--user-file')).toBe('--user-file: expected FILE (NAME:PASSWORD on its first line), received nothing');
    expect(problem('--dump=1')).toBe('--dump: expected no value (a flag), received "1"');
    // Each value option names what its value is.
    expect(['-p', '-t', '-u', '--port', '--thresh', '--user'].map((o) => problem(o))).toEqual([
      '-p: expected PORT, received nothing',
      '-t: expected a:b:c:d, received nothing',
      '-u: expected NAME:PASSWORD, received nothing',
      '--port: expected PORT, received nothing',
      '--thresh: expected a:b:c:d, received nothing',
      '--user: expected NAME:PASSWORD, received nothing',
    ]);
    expect(problem('-t', '-d')).toBe('-t: expected a:b:c:d, received the option -d');
    expect(problem('-u', '-d')).toBe('-u: expected NAME:PASSWORD, received a word starting with -');
  });

  it('an option given twice is refused, a password never shown', () => {
    expect(problem('-s', 'a', '--server', 'b')).toBe('-s/--server: expected once, received "a" and "b"');
    expect(problem('-u', 'n:secret', '--user=m:other')).toBe('-u/--user: expected once, received it twice');
    expect(problem('-d', '-d')).toBe('-d/--dump: expected once, received it twice');
    expect(problem('-h', '--help')).toBe('-h/--help: expected once, received it twice');
    expect(problem('--user-file', 'a', '--user-file=b')).toBe('--user-file: expected once, received "a" and "b"');
  });
});
