// Help of every command and every program in bin/, and the command-line refusals: unknown options, bare value options, stray words, a missing root.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/mgr-proc.js';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { PROJECT, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let commands: string[];

/** Runs a program of bin/ with RQ_ROOT unset; exit status, stdout and stderr lines. */
function runBin(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    const e = { ...process.env, ...env };
    if (env.RQ_ROOT === undefined) delete e.RQ_ROOT;
    execFile(BIN(name), args, { env: e, timeout: 20_000 }, (err, stdout, stderr) => {
      const lines = (s: string) => s.split('\n').filter((l) => l !== '');
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: lines(stdout), err: lines(stderr) });
    });
  });
}

beforeAll(async () => {
  t = await makeRoot();
  // A queue directory without a running process: a command line refused before asking exits 2, one that asks exits 3.
  await addQueue(t.root, 'test');
  const list = await runRq(['--help']);
  commands = list.out.slice(1).map((l) => l.trim().split(/\s+/)[0]);
});

afterAll(async () => {
  await t?.cleanup();
});

describe('rq <command> --help', () => {
  it('lists the operator commands among the others', () => {
    expect(commands).toEqual(expect.arrayContaining(['wait', 'queues', 'ls', 'retry', 'rm', 'pause', 'resume', 'down', 'up', 'tail']));
  });

  it('prints, for every command, its summary, usage, each option with its meaning and an example, exit 0 (same for -h)', async () => {
    const summaries = new Map((await runRq(['--help'])).out.slice(1).map((l) => [l.trim().split(/\s+/)[0], l.trim().replace(/^\S+\s+/, '')]));
    const check = async (cmd: string) => {
      const r = await runRq([cmd, '--help']);
      expect(r.code, cmd).toBe(0);
      expect(r.err).toEqual([]);
      expect(r.out[0]).toBe(`rq ${cmd}: ${summaries.get(cmd)}`);
      expect(r.out.find((l) => l.startsWith('Usage: '))).toMatch(new RegExp(`^Usage: rq ${cmd}( |$)`));
      const start = r.out.indexOf('Options:');
      expect(start, cmd).toBeGreaterThan(0);
      const options = r.out.slice(start + 1).filter((l) => /^ {2}-/.test(l));
      for (const line of options) expect(line, cmd).toMatch(/^ {2}(--\S+( \S+)?|-h, --help) +\S/);
      expect(options.map((l) => l.trim().split(/\s+/)[0])).toEqual(expect.arrayContaining(['--root', '-h,']));
      expect(r.out).toContainEqual(expect.stringMatching(new RegExp(`^ {2}\\$ (.*; )?(id=\\$\\()?rq ${cmd} `)));
      expect(await runRq([cmd, '-h'])).toEqual(r);
    };
    // Four at a time: about a hundred node start-ups in series outlast the default timeout on a busy machine.
    const left = [...commands];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let cmd = left.shift(); cmd !== undefined; cmd = left.shift()) await check(cmd);
      }),
    );
  }, 120_000);

  it('the help of sendmesg names every message option, with --wait', async () => {
    const names = (await runRq(['sendmesg', '--help'])).out.filter((l) => /^ {2}--/.test(l)).map((l) => l.trim().split(/[\s[]/)[0]);
    expect(names).toEqual(
      expect.arrayContaining([
        '--dest',
        '--param1',
        '--param4',
        '--force_remote',
        '--relay-ok',
        '--tags',
        '--depends',
        '--limit',
        '--idempotency-key',
        '--wait',
        '--root',
      ]),
    );
  });
});

describe('rq refuses what it would have ignored: exit 2, one stderr line naming the option, nothing asked', () => {
  const rq = (args: string[], env?: NodeJS.ProcessEnv) => runRq(args, { root: t.root, env });

  it('an unknown option, with the closest valid one', async () => {
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'test', '--parm1', 'x']),
      /^rq: sendmesg: unknown option --parm1 \(did you mean --param1\?\); rq sendmesg --help lists the options$/,
      2,
    );
    expectOneLineError(
      await rq(['history', '--msg_id', 'test/20200101.0000.00.000.1', '--jsno']),
      /^rq: history: unknown option --jsno \(did you mean --json\?\)/,
      2,
    );
    expectOneLineError(
      await rq(['state', '--msg_id', 'test/20200101.0000.00.000.1', '--frobnicate']),
      /^rq: state: unknown option --frobnicate; valid options: --msg_id, --json, --root$/,
      2,
    );
  });

  it('a value option given bare, instead of sending "true"', async () => {
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'test', '--param1']),
      /^rq: --param1: expected a value \(--param1 TEXT or --param1=TEXT\), received no value$/,
      2,
    );
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--param2', '--param1', 'x']), /^rq: --param2: expected a value/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--no-src']), /^rq: --src: expected a value/, 2);
    expectOneLineError(await rq(['wait', 'test/20200101.0000.00.000.1', '--timeout']), /^rq: --timeout: expected whole seconds, received no value$/, 2);
  });

  it('a word where the command takes none, and a word named twice', async () => {
    expectOneLineError(
      await rq(['queues', 'extra']),
      /^rq: queues: unexpected argument "extra": rq queues takes no words besides its options; options are --name value$/,
      2,
    );
    expectOneLineError(
      await rq(['state', 'test/20200101.0000.00.000.1', 'extra']),
      /^rq: state: unexpected argument "extra": rq state takes at most 1 word \(<msg_id>\); options are --name value$/,
      2,
    );
    expectOneLineError(await rq(['wait', 'test/20200101.0000.00.000.1', '--msg_id', 'test/20200101.0000.00.000.2']), /^rq: the msg_id is named twice/, 2);
  });

  it('bare flags never take the next word: rq ls --json <queue> lists <queue>', async () => {
    expectOneLineError(await rq(['ls', '--json', 'test']), /^rq: queue test: its process does not answer/, 3);
  });

  it('a --root or RQ_ROOT that is not an rq root names where it came from', async () => {
    expectOneLineError(await runRq(['sendmesg', '--dest', 'test', '--root', '/nonexistent']), /^rq: --root \/nonexistent: no such directory$/, 2);
    expectOneLineError(await runBin('rq', ['queues'], { RQ_ROOT: '/nonexistent' }), /^rq: RQ_ROOT \/nonexistent: no such directory$/, 2);
    const plain = path.join(t.root, 'plain');
    await fs.mkdir(plain);
    expectOneLineError(await runRq(['queues', '--root', plain]), /^rq: --root .*\/plain: not an rq root \(no queues\/ folder/, 2);
  });

  it('an unknown command is one line with the nearest command (exit 1, as classic)', async () => {
    expectOneLineError(
      await rq(['sendmsg', '--dest', 'test']),
      /^rq: unknown command "sendmsg"; did you mean "sendmesg"\? \(rq --help lists every command\)$/,
      1,
    );
  });

  it('no command: a usage line and the common commands in a few lines, where the rest are; exit 1 as classic', async () => {
    const r = await runRq([]);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([]);
    expect(r.out.length).toBeLessThanOrEqual(10);
    expect(r.out[0]).toBe('Usage: rq <command> [--key value | --key=value | --flag] … [--root DIR]');
    expect(r.out.slice(2, -1).map((l) => l.trim().split(/\s+/)[0])).toEqual(['sendmesg', 'statusmesg', 'wait', 'tail', 'queues', 'ls', 'doctor']);
    expect(r.out.at(-1)).toBe(`rq --help lists all ${commands.length} commands, rq <command> --help explains one, rq --version prints the version`);
  });

  it('rq help is rq --help, rq help <command> is rq <command> --help (exit 0); rq help of no command is refused as one', async () => {
    const [list, help] = await Promise.all([runRq(['--help']), runRq(['help'])]);
    expect(help).toEqual(list);
    expect(help.code).toBe(0);
    const [one, helpOne] = await Promise.all([runRq(['sendmesg', '--help']), runRq(['help', 'sendmesg'])]);
    expect(helpOne).toEqual(one);
    expect(helpOne.out[0]).toMatch(/^rq sendmesg: /);
    expectOneLineError(await runRq(['help', 'sendmsg']), /^rq: unknown command "sendmsg"; did you mean "sendmesg"\? /, 1);
  });

  it("--version and version print package.json's version, exit 0, without a root", async () => {
    const { version } = JSON.parse(await fs.readFile(path.join(PROJECT, 'package.json'), 'utf8')) as { version: string };
    for (const args of [['--version'], ['version']]) {
      const r = await runBin('rq', args, { RQ_ROOT: '/nonexistent' });
      expect(r, args[0]).toEqual({ code: 0, out: [`rq ${version}`], err: [] });
    }
  });
});

describe('the other programs of bin/', () => {
  it("rq-init --help is its own help, not rq-mgr's", async () => {
    const r = await runBin('rq-init', ['--help']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^rq-init: run the rq supervisor \(rq-mgr\) in the foreground/);
    expect(r.out).toContain('Usage: rq-init [options]');
    expect(r.out).toContainEqual(expect.stringMatching(/^ {2}\$ rq-init --root /));
    expect(r.out.join('\n')).not.toMatch(/usage: rq-mgr/i);
  });

  it('rq-init and rq-mgr refuse a missing root and unknown options by name', async () => {
    expectOneLineError(await runBin('rq-init', ['--root', '/nonexistent']), /^rq-init: --root \/nonexistent: no such directory$/, 1);
    expectOneLineError(await runBin('rq-init', ['--roto', t.root]), /^rq-init: unknown option --roto \(did you mean --root\?\)/, 1);
    expectOneLineError(await runBin('rq-mgr', ['status', '--root', '/nonexistent']), /^rq-mgr: --root \/nonexistent: no such directory$/, 1);
    expectOneLineError(await runBin('rq-mgr', ['stop', '--timout', '5', '--root', t.root]), /^rq-mgr: unknown option --timout \(did you mean --timeout\?\)/, 1);
  });

  it('rq-mgr, rq-install, rq-start and check_rq explain every option with an example', async () => {
    const expectations: [string, string[], RegExp, RegExp][] = [
      ['rq-mgr', ['--help'], /^rq-mgr: control the rq supervisor/, /^ {2}\$ rq-mgr start /],
      ['rq-mgr', ['stop', '--help'], /^rq-mgr: control the rq supervisor/, /^ {2}stop \[--timeout S\] +TERM rq-mgr/],
      ['rq-install', ['--help'], /^rq-install: make a directory an rq root/, /^ {2}--port PORT +the web server's port/],
      ['rq-start', ['--help'], /^rq-start \(npm start\): install a default rq root/, /^ {2}\$ npm start$/],
      ['check_rq', ['-h'], /^check_rq: Nagios-style probe/, /^ {2}-t, --thresh a:b:c:d +a\/b: /],
    ];
    for (const [bin, args, first, line] of expectations) {
      const r = await runBin(bin, args);
      expect([bin, r.code, r.err]).toEqual([bin, 0, []]);
      expect(r.out[0]).toMatch(first);
      expect(r.out).toContainEqual(expect.stringMatching(line));
    }
    expect(await runBin('check_rq', ['--srever', 'x'])).toEqual({
      code: 3,
      out: ['UNKNOWN: unknown option --srever (did you mean --server?); check_rq -h lists the options'],
      err: [],
    });
    expect(await runBin('rq-start', ['--frob'])).toMatchObject({ code: 2, err: [expect.stringMatching(/^rq-start: unknown option --frob/)] });
  });
});
