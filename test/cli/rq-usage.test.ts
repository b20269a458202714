// bin/rq's command words and its bad input against a live root: help lists every command, unknown commands and queues, malformed options, each refused on one stderr line.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { expectOneLineError } from '../helpers/rq-cli.js';
import { FULLID, cliRoot, shortId } from './rq-root-harness.js';

/** The classic commands, in the classic order; rq-beyond commands follow them (that list grows feature by feature). */
const COMMANDS = [
  'sendmesg',
  'prepmesg',
  'attachmesg',
  'commitmesg',
  'statusmesg',
  'state',
  'statuscountmesg',
  'attachstatusmesg',
  'single_que',
  'clone',
  'verify_rules',
];
const BEYOND_COMMANDS = ['cancel', 'requeue', 'history', 'running', 'waiting'];

const s = cliRoot();
const { rq } = s;

describe('rq help and command words', () => {
  it('lists every command without the classic cmd_ prefix: exit 0 for --help and -h, 1 with no arguments', async () => {
    for (const args of [['--help'], ['-h'], ['--root', '/nonexistent', '-h']]) {
      const r = await rq(args, { root: false });
      expect(r.code).toBe(0);
      expect(r.out[0]).toBe('Valid commands are:');
      const words = r.out.slice(1).map((l) => l.trim().split(/\s+/)[0]);
      expect(words.slice(0, COMMANDS.length)).toEqual(COMMANDS);
      expect(words.slice(COMMANDS.length)).toEqual(expect.arrayContaining(BEYOND_COMMANDS));
      expect(new Set(words).size).toBe(words.length);
      for (const line of r.out.slice(1)) expect(line).toMatch(/^ {2}\S+\s+\S.*/);
    }
    // rq alone: the classic exit 1, with a usage line and the common commands, not the whole list.
    const bare = await rq([], { root: false });
    expect(bare.code).toBe(1);
    expect(bare.out[0]).toMatch(/^Usage: rq <command> /);
  });

  it('refuses an option where the command should be with one line saying so, exit 2', async () => {
    for (const args of [['--frob'], ['-x'], ['--root', '/tmp']]) {
      expectOneLineError(
        await rq(args, { root: false }),
        new RegExp(`^rq: "${args[0]}": expected a command first \\(rq <command> \\[options\\]\\), received an option; rq --help lists every command$`),
        2,
      );
    }
  });

  it('refuses an unknown command with one line naming the nearest command, exit 1, even when help is asked', async () => {
    expectOneLineError(await rq(['sendmsg', '--dest', 'test']), /^rq: unknown command "sendmsg"; did you mean "sendmesg"\? \(rq --help lists every command\)$/);
    expectOneLineError(await rq(['stat', 'test/20200101.0000.00.000.1']), /^rq: unknown command "stat"; did you mean "state"\?/);
    expectOneLineError(await rq(['sendmsg', '--help']), /^rq: unknown command "sendmsg"; did you mean "sendmesg"\?/);
    expectOneLineError(await rq(['frobnicate']), /^rq: unknown command "frobnicate" \(rq --help lists every command\)$/);
  });

  it('verify_rules: ok for a good rules file, fail for a bad one, an error for a missing --path', async () => {
    const good = path.join(s.t.root, 'good.rb');
    await fs.writeFile(good, 'rule "to far"\nsrc /^app/\naction :relay\nroute "h1:3333"\n\nrule "default"\naction :done\n');
    expect(await rq(['verify_rules', '--path', good])).toMatchObject({ code: 0, out: ['ok'] });
    const bad = path.join(s.t.root, 'bad.rb');
    await fs.writeFile(bad, 'rule "broken"\naction :explode\n\n');
    expect(await rq(['verify_rules', '--path', bad])).toMatchObject({ code: 1, out: ['fail bad router rules file'] });
    expect((await rq(['verify_rules'])).code).not.toBe(0);
  });
});

describe('rq bad input: non-zero exit, one stderr line, no stack trace', () => {
  it('unknown queue and dead queue', async () => {
    expectOneLineError(await rq(['sendmesg', '--dest', 'nosuch']), /^rq: queue not found: nosuch$/);
    expectOneLineError(await rq(['state', '--msg_id', 'http://h:1/q/nosuch/20200101.0000.00.000.1']), /^rq: queue not found: nosuch$/);
    expectOneLineError(await rq(['sendmesg', '--dest', 'dead']), /^rq: queue dead: its process does not answer \(.*\)$/, 3);
  });

  it('a queue whose process answers an empty reply is named with what it sent, not printed as a blank reply line', async () => {
    // A process on the queue's socket that speaks the framing but answers [] to everything.
    await fs.mkdir(queuePaths(s.t.root, 'mute').dir);
    const server = await listenSocket({ path: queuePaths(s.t.root, 'mute').sock, proto: 'rq1', log: silentLogger(), handle: () => '[]' });
    try {
      expectOneLineError(await rq(['sendmesg', '--dest', 'mute']), /^rq: queue mute: unexpected reply: \[\]$/);
      expectOneLineError(await rq(['statusmesg', '--msg_id', 'mute/20200101.0000.00.000.1']), /^rq: queue mute: unexpected reply: \[\]$/);
    } finally {
      await server.close();
    }
  });

  it('missing or malformed options name the flag, what was expected and what was received', async () => {
    expectOneLineError(await rq(['sendmesg', '--param1', 'x']), /^rq: --dest: expected .*, received nothing$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest']), /^rq: --dest: expected .*, received no value$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', '../etc']), /^rq: --dest: queue name: expected .*received "\.\.\/etc"$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--count', 'x']), /^rq: --count: expected a whole number >= 0, received "x"$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--max_count=-1']), /^rq: --max_count: expected a whole number >= 0, received "-1"$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--due', 'soon']), /^rq: --due: expected epoch seconds .*, received "soon"$/, 2);
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'test', '--due', '1796537141000']),
      /^rq: --due: expected epoch seconds \(a number from 0 to 253402300799, the end of year 9999\), received "1796537141000 \(milliseconds\? 1796537141 is that time in seconds\)"$/,
      2,
    );
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--count']), /^rq: --count: expected a value .*, received no value$/, 2);
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'test', '--max_retries', 'five']),
      /^rq: --max_retries: expected a whole number 0-1000, received "five"$/,
      2,
    );
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--timeout']), /^rq: --timeout: expected a value .*, received no value$/, 2);
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'test', '--retry_jitter', '1.5']),
      /^rq: --retry_jitter: expected a number from 0 to 1, received "1.5"$/,
      2,
    );
    expectOneLineError(await rq(['state']), /^rq: --msg_id: expected a full message id .*, received nothing$/, 2);
    expectOneLineError(await rq(['state', '--msg_id', 'garbage']), /^rq: --msg_id: expected a full message id .*, received "garbage"$/, 2);
    expectOneLineError(
      await rq(['commitmesg', '--msg_id', 'http://h:1/q/test/not-an-id']),
      /^rq: --msg_id: expected .*received "http:\/\/h:1\/q\/test\/not-an-id"$/,
      2,
    );
    expectOneLineError(await rq(['state', '--msg_id', 'http://h:1/q/../20200101.0000.00.000.1']), /^rq: --msg_id: expected /, 2);
    expectOneLineError(
      await rq(['statusmesg', '--msg_id', 'test/20200101.0000.00.000.1', '--root'], { root: false }),
      /^rq: --root: expected a directory path, received no value$/,
      2,
    );
  });

  it('attachmesg checks the file before asking the queue', async () => {
    const id = FULLID('test').exec((await rq(['prepmesg', '--dest', 'test'])).out[0])![1];
    expectOneLineError(
      await rq(['attachmesg', '--msg_id', id, '--pathname', 'missing.txt'], { cwd: s.workDir }),
      new RegExp(`^rq: No such file ${s.workDir}/missing\\.txt to attach to message$`),
    );
    expectOneLineError(
      await rq(['attachmesg', '--msg_id', id, '--pathname', '.'], { cwd: s.workDir }),
      new RegExp(`^rq: Attachment currently cannot be a directory ${s.workDir}$`),
    );
    expectOneLineError(await rq(['attachmesg', '--msg_id', id, '--pathname', '/dev/null']), /^rq: Attachment currently not of supported type: \/dev\/null$/);
    expectOneLineError(await rq(['attachmesg', '--msg_id', id]), /^rq: --pathname: expected .*, received nothing$/, 2);
    expect(await s.test.cmd('get_message', { msg_id: shortId(id) })).toEqual(['ok', expect.not.objectContaining({ _attachments: expect.anything() })]);
  });
});
