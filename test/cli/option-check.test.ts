// The command table, its parser and its help as pure functions: typo suggestions, refusals, and that every entry is complete.
import { describe, expect, it } from 'vitest';
import { isRqError } from '../../src/errors.js';
import { commandHelp, usageLine } from '../../src/cli/command-help.js';
import type { CommandSpec } from '../../src/cli/command-spec.js';
import { checkCommandLine, closest, distance, unknownCommand } from '../../src/cli/option-check.js';
import { RQ_COMMANDS } from '../../src/cli/rq-commands.js';

const SPEC: CommandSpec = {
  summary: 'a test command',
  args: [{ name: 'queue', option: 'queue' }],
  options: [
    { name: 'queue', arg: 'QUEUE', help: 'the queue' },
    { name: 'param1', arg: 'TEXT', help: 'a value' },
    { name: 'json', kind: 'flag', help: 'as JSON' },
    { name: 'wait', kind: 'either', arg: 'S', help: 'wait' },
  ],
  examples: ['rq demo q --json'],
};

function refusal(argv: string[]): string {
  try {
    checkCommandLine('demo', SPEC, argv);
  } catch (err) {
    expect(isRqError(err, 'RQ_ERR_USAGE')).toBe(true);
    return (err as Error).message;
  }
  throw new Error(`not refused: ${argv.join(' ')}`);
}

describe('typo suggestions', () => {
  it('counts inserts, deletes, substitutions and swaps of neighbours as one edit each', () => {
    expect([distance('parm1', 'param1'), distance('jsno', 'json'), distance('root', 'root'), distance('', 'abc')]).toEqual([1, 1, 0, 3]);
    // A swap needs both letters to match crosswise: `ax` → `ya` shares one of them only, two substitutions.
    expect([distance('ab', 'ba'), distance('ax', 'ya'), distance('xa', 'ay')]).toEqual([1, 2, 2]);
  });

  it('suggests the nearest name only when it is near enough to be a typo', () => {
    expect(closest('parm1', ['dest', 'param1', 'param2'])).toBe('param1');
    expect(closest('Param1', ['param1'])).toBe('param1');
    expect(closest('frobnicate', ['msg_id', 'root'])).toBeUndefined();
  });

  it('an unknown command names the nearest command, else only where the list is', () => {
    const commands = Object.keys(RQ_COMMANDS);
    expect(unknownCommand('sendmsg', commands)).toBe('rq: unknown command "sendmsg"; did you mean "sendmesg"? (rq --help lists every command)');
    expect(unknownCommand('queus', commands)).toBe('rq: unknown command "queus"; did you mean "queues"? (rq --help lists every command)');
    expect(unknownCommand('frobnicate', commands)).toBe('rq: unknown command "frobnicate" (rq --help lists every command)');
  });
});

describe('checkCommandLine', () => {
  it('takes known options, a flag without the next word, and an either option with or without a value', () => {
    const p = checkCommandLine('demo', SPEC, ['demo', '--json', 'q', '--param1', 'x', '--wait']);
    expect(p.opts).toEqual({ json: true, param1: 'x', wait: true });
    expect(p.rest).toEqual(['q']);
    expect(checkCommandLine('demo', SPEC, ['demo', '--wait', '5', '--root=/r']).opts).toEqual({ wait: '5', root: '/r' });
  });

  it('refuses an unknown option (naming the closest, else every valid one), a bare value option and a stray word', () => {
    expect(refusal(['demo', '--parm1', 'x'])).toBe('demo: unknown option --parm1 (did you mean --param1?); rq demo --help lists the options');
    expect(refusal(['demo', '--zzzzzzzz'])).toBe('demo: unknown option --zzzzzzzz; valid options: --queue, --param1, --json, --wait, --root');
    expect(refusal(['demo', '--param1'])).toBe('--param1: expected a value (--param1 TEXT or --param1=TEXT), received no value');
    expect(refusal(['demo', '--no-param1'])).toMatch(/^--param1: expected a value/);
    expect(refusal(['demo', 'q', 'r'])).toBe('demo: unexpected argument "r": rq demo takes at most 1 word (<queue>); options are --name value');
  });

  it('refuses an option with one dash as an option, with the nearest; after a bare -- it is a word', () => {
    expect(refusal(['demo', '-json'])).toBe('demo: unknown option -json (did you mean --json?); rq demo --help lists the options');
    expect(refusal(['demo', 'q', '-v'])).toBe('demo: unknown option -v; valid options: --queue, --param1, --json, --wait, --root');
    expect(checkCommandLine('demo', SPEC, ['demo', '--', '-q']).rest).toEqual(['-q']);
  });
});

describe('the help', () => {
  it('names the words, each option with its meaning, --root, --help and the example', () => {
    expect(usageLine('demo', SPEC)).toBe('rq demo [<queue>] [options]');
    const lines = commandHelp('demo', SPEC);
    expect(lines[0]).toBe('rq demo: a test command');
    for (const l of ['  --param1 TEXT  a value', '  --json         as JSON', '  --wait[=S]     wait', '  -h, --help     print this help and exit 0'])
      expect(lines).toContain(l);
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}--root DIR +the rq root/));
    expect(lines.slice(-2)).toEqual(['Example:', '  $ rq demo q --json']);
  });

  it('every rq command has a summary, options with a help each, no option twice, and an example of itself', () => {
    for (const [name, cmd] of Object.entries(RQ_COMMANDS)) {
      expect(cmd.summary, name).toMatch(/^\S.{10,}$/);
      expect(cmd.examples.length, name).toBeGreaterThan(0);
      expect(
        cmd.examples.some((e) => e.includes(`rq ${name}`)),
        name,
      ).toBe(true);
      const names = cmd.options.map((o) => o.name);
      expect(new Set(names).size, name).toBe(names.length);
      expect(names, name).not.toContain('root');
      for (const o of cmd.options) expect(o.help, `${name} --${o.name}`).toMatch(/^\S/);
      for (const a of cmd.args ?? []) if (a.option) expect(names, name).toContain(a.option);
    }
  });

  it('a command on one message, or on one queue, takes it as the word after the command too', () => {
    // --queue is a filter there (every queue without it), and the word is the message or the tag.
    const queueIsFilter = ['cancel', 'requeue', 'tagged', 'tracked'];
    for (const [name, cmd] of Object.entries(RQ_COMMANDS)) {
      const names = cmd.options.map((o) => o.name);
      const first = cmd.args?.[0]?.option;
      if (names.includes('msg_id')) expect([name, first]).toEqual([name, 'msg_id']);
      else if (names.includes('queue') && !queueIsFilter.includes(name)) expect([name, first]).toEqual([name, 'queue']);
    }
  });
});
