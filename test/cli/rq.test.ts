import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

/** The classic commands, in the classic order; rq-beyond commands follow them (that list grows feature by feature). */
const COMMANDS = ['sendmesg', 'prepmesg', 'attachmesg', 'commitmesg', 'statusmesg', 'state', 'statuscountmesg', 'attachstatusmesg', 'single_que', 'clone', 'verify_rules'];
const BEYOND_COMMANDS = ['cancel', 'requeue', 'history', 'running', 'waiting'];

let t: TestRoot;
let test: QueueProc;
let relay: QueueProc;
let workDir: string;

/** Runs the real bin/rq against the temp root (`root: false` leaves --root out). */
function rq(args: string[], opts: { cwd?: string; root?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return runRq(args, { cwd: opts.cwd, env: opts.env, root: opts.root === false ? undefined : t.root });
}

const shortId = (fullId: string) => fullId.split('/').pop()!;
const FULLID = (q: string) => new RegExp(`^ok (http://127\\.0\\.0\\.1:\\d+/q/${q}/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+)$`);

const send = (...args: string[]): Promise<string> => sendmesg(rq, 'test', ...args);

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'test');
  await addQueue(t.root, 'relay');
  await addQueue(t.root, 'dead');
  [test, relay] = await Promise.all([QueueProc.start(t.root, 'test'), QueueProc.start(t.root, 'relay')]);
  workDir = path.join(t.root, 'work');
  await fs.mkdir(workDir);
});

afterAll(async () => {
  await Promise.all([test?.stop(), relay?.stop()]);
  await t?.cleanup();
});

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

  it('refuses an unknown command with one line naming the nearest command, exit 1, even when help is asked', async () => {
    expectOneLineError(await rq(['sendmsg', '--dest', 'test']), /^rq: unknown command "sendmsg"; did you mean "sendmesg"\? \(rq --help lists every command\)$/);
    expectOneLineError(await rq(['stat', 'test/20200101.0000.00.000.1']), /^rq: unknown command "stat"; did you mean "state"\?/);
    expectOneLineError(await rq(['sendmsg', '--help']), /^rq: unknown command "sendmsg"; did you mean "sendmesg"\?/);
    expectOneLineError(await rq(['frobnicate']), /^rq: unknown command "frobnicate" \(rq --help lists every command\)$/);
  });

  it('verify_rules: ok for a good rules file, fail for a bad one, an error for a missing --path', async () => {
    const good = path.join(t.root, 'good.rb');
    await fs.writeFile(good, 'rule "to far"\nsrc /^app/\naction :relay\nroute "h1:3333"\n\nrule "default"\naction :done\n');
    expect(await rq(['verify_rules', '--path', good])).toMatchObject({ code: 0, out: ['ok'] });
    const bad = path.join(t.root, 'bad.rb');
    await fs.writeFile(bad, 'rule "broken"\naction :explode\n\n');
    expect(await rq(['verify_rules', '--path', bad])).toMatchObject({ code: 1, out: ['fail bad router rules file'] });
    expect((await rq(['verify_rules'])).code).not.toBe(0);
  });
});

describe('rq sendmesg and message status', () => {
  it('sends, then reports status, state and count', async () => {
    const id = await send('--param1', 'done');
    await test.waitState(shortId(id), ['done']);
    expect(await rq(['statusmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
    expect(await rq(['state', '--msg_id', id])).toEqual({ code: 0, out: ['ok done'], err: [] });
    expect(await rq(['statuscountmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('accepts --k=v and --k v, sends values as given and a bare --force_remote as true', async () => {
    const id = await send('--param1=done', '--param2', 'two words', '--src=me=you', '--count', '2', '--max_count=9', '--force_remote');
    const msg = await test.waitState(shortId(id), ['done']);
    expect(msg).toMatchObject({ dest: 'test', param1: 'done', param2: 'two words', src: 'me=you', count: 2, max_count: 9, force_remote: true });
  });

  it('takes the run-policy flags (rq-beyond §B1.10) and sends them as the message fields', async () => {
    const id = await send('--param1', 'done', '--retries', '3', '--backoff_base=0.5', '--min_retry_delay', '0', '--max_retry_delay', '60', '--retry_jitter', '0', '--timeout', '30', '--heartbeat_timeout', '10');
    const msg = await test.waitState(shortId(id), ['done']);
    expect(msg).toMatchObject({ max_retries: 3, backoff_base: 0.5, min_retry_delay: 0, max_retry_delay: 60, retry_jitter: 0, timeout: 30, heartbeat_timeout: 10 });
    expect(msg).not.toHaveProperty('retries');
  });

  it('counts a resend in statuscountmesg', async () => {
    const id = await send('--param1', 'resend1');
    await test.waitState(shortId(id), ['done'], 15_000);
    expect(await rq(['statuscountmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 1'], err: [] });
    expect((await rq(['statusmesg', '--msg_id', id])).out).toEqual(['ok done - resent once']);
  });

  it('takes the message as the word after the command too, in any of its forms', async () => {
    const id = await send('--param1', 'done');
    await test.waitState(shortId(id), ['done']);
    for (const given of [id, `test/${shortId(id)}`, shortId(id)]) {
      expect(await rq(['statusmesg', given])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
      expect(await rq(['statuscountmesg', given])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    }
    expectOneLineError(await rq(['state', id, '--msg_id', `test/${shortId(id)}`]), /^rq: the msg_id is named twice/, 2);
  });

  it('takes <queue>/<id> as well as a full id, and prints fail replies on stdout with exit 1', async () => {
    const id = await send('--param1', 'err');
    await test.waitState(shortId(id), ['err']);
    expect(await rq(['state', '--msg_id', `test/${shortId(id)}`])).toEqual({ code: 0, out: ['ok err'], err: [] });
    expect(await rq(['state', '--msg_id', 'http://elsewhere:1/q/test/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    expect(await rq(['statusmesg', '--msg_id', 'test/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });

  it('relays an http dest through the relay queue only with --relay-ok', async () => {
    const dest = 'http://127.0.0.1:1/q/far';
    expectOneLineError(await rq(['sendmesg', '--dest', dest, '--param1', 'done']), /^rq: cannot relay message to http:\/\/127\.0\.0\.1:1\/q\/far: add --relay-ok/, 2);
    const r = await rq(['sendmesg', '--dest', dest, '--relay-ok', '--param1', 'done']);
    expect(r.code).toBe(0);
    const id = FULLID('relay').exec(r.out[0])![1];
    expect((await relay.cmd('get_message', { msg_id: shortId(id) }))[1]).toMatchObject({ dest, param1: 'done' });
  });

  it('single_que answers the waiting message instead of queueing another', async () => {
    // Paused, so the first message is still waiting when the second single_que asks, however slow the machine.
    const pause = path.join(t.root, 'config', 'test.pause');
    await fs.writeFile(pause, '');
    expect(await test.cmd('status')).toEqual(['PAUSE']);
    const first = await rq(['single_que', '--dest', 'test', '--param1', 'done']);
    expect(first.out[0]).toMatch(FULLID('test'));
    const again = await rq(['single_que', '--dest', 'test', '--param1', 'done']);
    await fs.rm(pause);
    expect(await test.cmd('status')).toEqual(['UP']);
    expect(again).toEqual({ code: 0, out: first.out, err: [] });
    expectOneLineError(await rq(['single_que', '--dest', 'http://x:1/q/y', '--relay-ok']), /^rq: --dest: expected a local queue name/, 2);
  });
});

describe('rq prepmesg, attachmesg, commitmesg, attachstatusmesg, clone', () => {
  it('prepares, attaches a relative path, lists it and commits', async () => {
    const data = 'attachment bytes\n'.repeat(100);
    await fs.writeFile(path.join(workDir, 'data.txt'), data);
    const md5 = createHash('md5').update(data).digest('hex');

    const prep = await rq(['prepmesg', '--dest', 'test', '--param1', 'done']);
    expect(prep.code).toBe(0);
    const id = FULLID('test').exec(prep.out[0])![1];
    expect(await rq(['state', '--msg_id', id])).toMatchObject({ code: 0, out: ['ok prep'] });

    const att = await rq(['attachmesg', '--msg_id', id, '--pathname', 'data.txt'], { cwd: workDir });
    expect(att).toEqual({ code: 0, out: [`ok ${md5}-Attached successfully for Message: ${id} attachment`], err: [] });
    const named = await rq(['attachmesg', '--msg_id', id, '--pathname=./data.txt', '--name', 'other.txt'], { cwd: workDir });
    expect(named.code).toBe(0);

    const list = await rq(['attachstatusmesg', '--msg_id', id]);
    expect(list.code).toBe(0);
    expect(list.out[0]).toBe('ok 2');
    const lines = list.out.slice(1).sort();
    expect(lines[0]).toMatch(new RegExp(`^data\\.txt ${md5} ${data.length} /\\S+/prep/${shortId(id)}/attach/data\\.txt$`));
    expect(lines[1]).toMatch(new RegExp(`^other\\.txt ${md5} ${data.length} /\\S+/attach/other\\.txt$`));

    expect(await rq(['commitmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok msg commited'], err: [] });
    expect(await rq(['commitmesg', '--msg_id', id])).toEqual({ code: 1, out: ['fail cannot find message'], err: [] });
    const late = await rq(['attachmesg', '--msg_id', id, '--pathname', 'data.txt'], { cwd: workDir });
    expect(late).toEqual({ code: 1, out: [`fail cannot find message for Message: ${id} attachment`], err: [] });
    await test.waitState(shortId(id), ['done']);
    expect((await rq(['attachstatusmesg', '--msg_id', id])).out[0]).toBe('ok 2');
  });

  it('prints ok 0 for a message without attachments', async () => {
    const id = await send('--param1', 'done');
    expect(await rq(['attachstatusmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('clones a finished message and refuses one in prep', async () => {
    const id = await send('--param1', 'done', '--param2', 'cloned');
    await test.waitState(shortId(id), ['done']);
    const r = await rq(['clone', '--msg_id', id]);
    expect(r.code).toBe(0);
    const copy = FULLID('test').exec(r.out[0])![1];
    expect(copy).not.toBe(id);
    expect(await test.waitState(shortId(copy), ['done'])).toMatchObject({ param2: 'cloned', cloned_from: shortId(id) });

    const prep = FULLID('test').exec((await rq(['prepmesg', '--dest', 'test'])).out[0])![1];
    expect(await rq(['clone', '--msg_id', prep])).toEqual({ code: 1, out: ['fail cannot clone message in prep state'], err: [] });
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
    await fs.mkdir(queuePaths(t.root, 'mute').dir);
    const server = await listenSocket({ path: queuePaths(t.root, 'mute').sock, proto: 'rq1', log: silentLogger(), handle: () => '[]' });
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
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--count']), /^rq: --count: expected a value .*, received no value$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--max_retries', 'five']), /^rq: --max_retries: expected a whole number 0-1000, received "five"$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--timeout']), /^rq: --timeout: expected a value .*, received no value$/, 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'test', '--retry_jitter', '1.5']), /^rq: --retry_jitter: expected a number from 0 to 1, received "1.5"$/, 2);
    expectOneLineError(await rq(['state']), /^rq: --msg_id: expected a full message id .*, received nothing$/, 2);
    expectOneLineError(await rq(['state', '--msg_id', 'garbage']), /^rq: --msg_id: expected a full message id .*, received "garbage"$/, 2);
    expectOneLineError(await rq(['commitmesg', '--msg_id', 'http://h:1/q/test/not-an-id']), /^rq: --msg_id: expected .*received "http:\/\/h:1\/q\/test\/not-an-id"$/, 2);
    expectOneLineError(await rq(['state', '--msg_id', 'http://h:1/q/../20200101.0000.00.000.1']), /^rq: --msg_id: expected /, 2);
    expectOneLineError(await rq(['statusmesg', '--msg_id', 'test/20200101.0000.00.000.1', '--root'], { root: false }), /^rq: --root: expected a directory path, received no value$/, 2);
  });

  it('attachmesg checks the file before asking the queue', async () => {
    const id = FULLID('test').exec((await rq(['prepmesg', '--dest', 'test'])).out[0])![1];
    expectOneLineError(await rq(['attachmesg', '--msg_id', id, '--pathname', 'missing.txt'], { cwd: workDir }), new RegExp(`^rq: No such file ${workDir}/missing\\.txt to attach to message$`));
    expectOneLineError(await rq(['attachmesg', '--msg_id', id, '--pathname', '.'], { cwd: workDir }), new RegExp(`^rq: Attachment currently cannot be a directory ${workDir}$`));
    expectOneLineError(await rq(['attachmesg', '--msg_id', id, '--pathname', '/dev/null']), /^rq: Attachment currently not of supported type: \/dev\/null$/);
    expectOneLineError(await rq(['attachmesg', '--msg_id', id]), /^rq: --pathname: expected .*, received nothing$/, 2);
    expect(await test.cmd('get_message', { msg_id: shortId(id) })).toEqual(['ok', expect.not.objectContaining({ _attachments: expect.anything() })]);
  });
});
