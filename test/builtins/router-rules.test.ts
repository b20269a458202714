// rq_router rules (spec §12.3): the safe line parser, finalisation, matching, host selection and dest rewrite; rq verify_rules.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_DEFAULT, parseRules } from '../../src/builtins/router-rules.js';
import { matchRule, selectHosts, txformHost } from '../../src/builtins/router-route.js';
import { rubyRegexp } from '../../src/builtins/ruby-regexp.js';
import { BIN, run } from '../helpers/mgr-proc.js';

const GOOD = `# routes of the stats farm
rule "box queues to the halb"
src /^box/i
dest %r{box_que}
action :relay
route "brxlog-be-halb02.btrll.com", "brxlog-be-halb03.btrll.com:4444"
log true

rule :balanced  # a symbol description
dest /^ftp_/
action :balance
route ["stats1.btrll.com", "stats2.btrll.com"], ["http://stats3.btrll.com:3333/q/ftp_other"]
delay 2

rule "default"
action :done
log false

rule "drops"
src /^junk$/
action :err
log false
`;

describe('parseRules', () => {
  it('reads a good file: statements, literals, defaults last, :err always logs', () => {
    const { rules, warnings } = parseRules(GOOD, 'rules.rb');
    expect(warnings).toEqual([]);
    expect(rules.map((r) => r.desc)).toEqual(['box queues to the halb', 'balanced', 'drops', 'default']);
    const [box, bal, drops, dflt] = rules;
    expect(box).toMatchObject({ action: 'relay', route: ['brxlog-be-halb02.btrll.com', 'brxlog-be-halb03.btrll.com:4444'], delay: 0, log: true, line: 2 });
    expect(box.src!.test('BOXER')).toBe(true);
    expect(box.dest!.test('http://x/q/box_que')).toBe(true);
    expect(bal).toMatchObject({
      action: 'balance',
      route: [['stats1.btrll.com', 'stats2.btrll.com'], ['http://stats3.btrll.com:3333/q/ftp_other']],
      delay: 2,
      log: false,
    });
    expect(drops).toMatchObject({ action: 'err', log: true });
    expect(dflt).toMatchObject({ action: 'done', log: false, line: 15 });
  });

  it('a file without a default gets the built-in one (err, logged); the last rule needs no blank line after it', () => {
    const { rules } = parseRules('rule "only"\ndest /x/\naction :done', 'r.rb');
    expect(rules).toHaveLength(2);
    expect(rules[0]).toMatchObject({ desc: 'only', action: 'done' });
    expect(rules[1]).toEqual(BUILTIN_DEFAULT);
    expect(parseRules('', 'empty.rb').rules).toEqual([BUILTIN_DEFAULT]);
  });

  it('only the last default counts', () => {
    const { rules } = parseRules('rule "default"\naction :done\n\nrule "default"\naction :err\n', 'r.rb');
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ action: 'err', line: 4 });
  });

  it('a statement with an argument of the wrong type is ignored, with a warning', () => {
    const { rules, warnings } = parseRules('rule "r"\ndest /x/\ndelay "soon"\nlog 1\nsrc "plain string"\naction :done\n', 'r.rb');
    expect(rules[0]).toMatchObject({ delay: 0, log: false });
    expect(rules[0].src).toBeUndefined();
    expect(warnings).toEqual([
      'r.rb:3: delay expects a whole number of seconds, got a string; statement ignored',
      'r.rb:4: log expects true or false, got a integer; statement ignored',
      'r.rb:5: src expects a regexp such as /pattern/, got a string; statement ignored',
    ]);
  });

  it.each([
    ['rule "r"\ndest /x/\naction :bounce\n', 'r.rb:3: unknown action :bounce (expected :relay, :balance, :done or :err)'],
    ['rule "r"\ndest /x/\naction :done\nsystem "rm -rf /"\n', 'r.rb:4: unknown statement system'],
    ['rule "r"\ndest /x/\naction :done\nroute File.read("/etc/passwd")\n', 'r.rb:4: File is not a literal (rules are not evaluated as Ruby)'],
    ['rule "r"\ndest /x/\naction :done\ndelay `id`\n', 'r.rb:4: unexpected "`id`"'],
    ['rule "r\ndest /x/\n', 'r.rb:1: unterminated string'],
    ['rule "r"\ndest /x\n', 'r.rb:2: unterminated regexp'],
    ['rule "r"\ndest /(/\naction :done\n', 'r.rb:2: regexp /(/: not a valid pattern'],
    ['rule "r#{`id`}"\n', 'r.rb:1: string interpolation'],
    ['rule "r"\ndest /#{x}/\n', 'r.rb:2: regexp /#{x}/: interpolation'],
    ['rule "r"\naction :done\n', 'r.rb:1: rule "r" has neither src nor dest'],
    ['rule "r"\ndest /x/\n', 'r.rb:1: rule "r" has no action'],
    ['rule "r"\ndest /x/\naction :relay\n', 'r.rb:1: rule "r": action :relay needs a route'],
    ['dest /x/\n', 'r.rb:1: dest outside a rule'],
    ['rule "r"\ndest /x/ /y/\naction :done\n', 'r.rb:2: unexpected "/y/"'],
  ])('refuses a bad file: %j', (text, reason) => {
    expect(() => parseRules(text, 'r.rb')).toThrow(reason);
  });
});

describe('Ruby regexps', () => {
  it('translates anchors, flags and \\h; refuses inline flags', () => {
    expect(rubyRegexp('\\Abox\\z', '').test('box')).toBe(true);
    expect(rubyRegexp('\\Abox\\z', '').test('a\nbox')).toBe(false);
    expect(rubyRegexp('^box$', '').test('a\nbox')).toBe(true); // Ruby ^ is a line anchor
    expect(rubyRegexp('a.b', 'm').test('a\nb')).toBe(true);
    expect(rubyRegexp(' a b # comment', 'x').test('ab')).toBe(true);
    expect(rubyRegexp('\\h+', '').test('beef')).toBe(true);
    expect(() => rubyRegexp('(?i)x', '')).toThrow(/inline flag groups/);
    expect(() => rubyRegexp('x', 'q')).toThrow(/unknown regexp flag/);
  });
});

describe('routing', () => {
  const { rules } = parseRules(GOOD, 'rules.rb');
  it('first matching rule; src needed when the rule has a src pattern; default matches the rest', () => {
    expect(matchRule(rules, { src: 'box1', dest: 'box_que' }).desc).toBe('box queues to the halb');
    expect(matchRule(rules, { dest: 'box_que' }).desc).toBe('default');
    expect(matchRule(rules, { src: 'x', dest: 'ftp_cleaner' }).desc).toBe('balanced');
    expect(matchRule(rules, { src: 'junk', dest: 'zzz' }).desc).toBe('drops');
    expect(matchRule(rules, { src: 'other', dest: 'zzz' }).desc).toBe('default');
  });

  it('relay: all hosts of a flat route, one of each sub-list of a nested one; balance: one of all', () => {
    expect(selectHosts(rules[0])).toEqual(['brxlog-be-halb02.btrll.com', 'brxlog-be-halb03.btrll.com:4444']);
    const nested = { ...rules[1], action: 'relay' as const };
    expect(selectHosts(nested, () => 0)).toEqual(['stats1.btrll.com', 'http://stats3.btrll.com:3333/q/ftp_other']);
    expect(selectHosts(nested, () => 0.99)).toEqual(['stats2.btrll.com', 'http://stats3.btrll.com:3333/q/ftp_other']);
    expect(selectHosts(rules[1], () => 0)).toEqual(['stats1.btrll.com']);
    expect(selectHosts(rules[1], () => 0.99)).toEqual(['http://stats3.btrll.com:3333/q/ftp_other']);
  });

  it('txform_host as the classic tests have it', () => {
    expect(txformHost('http://oldhost.btrll.com/q/box_que', 'brxlog-be-halb02.btrll.com')).toBe('http://brxlog-be-halb02.btrll.com:3333/q/box_que');
    expect(txformHost('ftp_cleaner', 'stats2.btrll.com')).toBe('http://stats2.btrll.com:3333/q/ftp_cleaner');
    expect(txformHost('test', '127.0.0.1:4000')).toBe('http://127.0.0.1:4000/q/test');
    expect(txformHost('/q/test', 'h:1')).toBe('http://h:1/q/test');
    expect(txformHost('anything', 'http://elsewhere/q/x')).toBe('http://elsewhere/q/x');
  });
});

describe('rq verify_rules', () => {
  let dir: string;
  // A rules file is checked before any root exists (a fresh clone, a CI job): no queues/ is needed.
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-rules-'));
    await fs.writeFile(path.join(dir, 'good.rb'), GOOD);
    await fs.writeFile(path.join(dir, 'bad.rb'), 'rule "r"\ndest /x/\naction :bounce\n');
    env = { RQ_ROOT: dir };
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  const rq = (...args: string[]) =>
    run(BIN('rq'), args, { cwd: dir, env: { ...process.env, ...env } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );

  it('prints ok for a good file, each rule first with --verbose', async () => {
    expect(await rq('verify_rules', '--path', 'good.rb')).toEqual({ code: 0, stdout: 'ok\n', stderr: '' });
    const v = await rq('verify_rules', '--path', path.join(dir, 'good.rb'), '--verbose');
    expect(v.code).toBe(0);
    const lines = v.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe(
      'line 2: rule "box queues to the halb" | src /^box/im | dest /box_que/m | action :relay | route ["brxlog-be-halb02.btrll.com","brxlog-be-halb03.btrll.com:4444"] | delay 0 | log true',
    );
    expect(lines[4]).toBe('ok');
  });

  it('prints fail bad router rules file (reason on stderr), exit 1', async () => {
    const r = await rq('verify_rules', '--path', 'bad.rb');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('fail bad router rules file\n');
    expect(r.stderr).toMatch(/bad\.rb:3: unknown action :bounce/);
    const missing = await rq('verify_rules', '--path', 'nope.rb');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('fail bad router rules file\n');
  });
});
