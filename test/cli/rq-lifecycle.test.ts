// rq's lifecycle and listing commands against real queue processes (rq-beyond §B1.10): cancel (with
// --purge and --wait), requeue of one message or of a queue's errs, history, running and waiting.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupMembers, killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let test: QueueProc;
let errs: QueueProc;
let lists: QueueProc;
const groups = killLeftoverGroups();

/** Runs the real bin/rq against the temp root. */
function rq(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return runRq(args, { env: opts.env, root: t.root });
}

const shortId = (fullId: string) => fullId.split('/').pop()!;
const AS_ALICE = { env: { USER: 'alice', LOGNAME: 'alice' } };
const later = () => String(Math.floor(Date.now() / 1000) + 3600);

const send = (dest: string, ...args: string[]): Promise<string> => sendmesg(rq, dest, ...args);

/** A `forever` script on `dest`, running: its full id and pid (the script's group leader). */
async function runForever(dest: string, name: string, ...args: string[]): Promise<{ id: string; pid: number }> {
  const pidFile = path.join(t.root, `${name}.pid`);
  const id = await send(dest, '--param1', 'forever', '--param2', pidFile, ...args);
  const pid = await pidInFile(pidFile);
  groups.push(pid);
  return { id, pid };
}

/** The reap KILLs what is left of the group; its members may take a moment to die after the message has moved on. */
const groupGone = (pid: number) => waitFor(async () => (await groupMembers(pid)).length === 0, `group ${pid} to be gone`);

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'test');
  await addQueue(t.root, 'errs');
  await addQueue(t.root, 'lists');
  [test, errs, lists] = await Promise.all(['test', 'errs', 'lists'].map((n) => QueueProc.start(t.root, n)));
});

afterAll(async () => {
  await Promise.all([test?.stop(), errs?.stop(), lists?.stop()]);
  await t?.cleanup();
});

describe('rq cancel, requeue, history (rq-beyond §B1.10, §B5, §B6, §B14)', () => {
  const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /;

  it('cancels a waiting message once, requeues it, and prints its history as text and as JSON', async () => {
    const id = await send('test', '--param1', 'done', '--due', String(Math.floor(Date.now() / 1000) + 3600));
    expect(await rq(['cancel', '--msg_id', id, '--reason', 'no longer needed'], AS_ALICE)).toEqual({ code: 0, out: ['ok msg cancelled'], err: [] });
    expect((await test.cmd('get_message', { msg_id: shortId(id) }))[1]).toMatchObject({
      state: 'err',
      outcome: 'cancelled',
      status: 'err - CANCELLED - no longer needed',
      cancel: { by: 'cli:alice', reason: 'no longer needed' },
    });
    expect(await rq(['cancel', '--msg_id', id], AS_ALICE)).toEqual({ code: 1, out: ['fail msg already finished (err)'], err: [] });

    const before = Date.now() / 1000;
    expect(await rq(['requeue', '--msg_id', `test/${shortId(id)}`, '--delay', '3600'], AS_ALICE)).toEqual({ code: 0, out: ['ok msg requeued'], err: [] });
    const m = (await test.cmd('get_message', { msg_id: shortId(id) }))[1];
    expect(m.state).toBe('que');
    expect(m.outcome).toBeUndefined();
    expect(m.cancel).toBeUndefined();
    expect(m.due).toBeGreaterThanOrEqual(before + 3600 - 1);
    expect(m.due).toBeLessThanOrEqual(Date.now() / 1000 + 3600 + 1);

    const h = await rq(['history', '--msg_id', id]);
    expect(h.code).toBe(0);
    expect(h.err).toEqual([]);
    expect(h.out[0]).toBe(`ok ${h.out.length - 1}`);
    const lines = h.out.slice(1);
    for (const line of lines) expect(line).toMatch(ISO);
    expect(lines.map((l) => l.replace(ISO, '').split(' ').slice(0, 2).join(' '))).toEqual(['create→que create', 'que→err cli:alice', 'err→que cli:alice']);
    expect(lines[1]).toMatch(/ - CANCELLED - no longer needed$/);

    const j = await rq(['history', '--msg_id', id, '--json']);
    expect(j.code).toBe(0);
    expect(j.out).toHaveLength(1);
    const entries = JSON.parse(j.out[0]) as { at: string; from: string | null; to: string; actor: string }[];
    expect(entries).toHaveLength(lines.length);
    expect(entries.map((e) => [e.from, e.to, e.actor])).toEqual([
      [null, 'que', 'create'],
      ['que', 'err', 'cli:alice'],
      ['err', 'que', 'cli:alice'],
    ]);
    expect(entries.map((e) => e.at)).toEqual(lines.map((l) => l.split(' ')[0]));

    expect(await rq(['requeue', '--msg_id', id])).toEqual({ code: 1, out: ['fail msg not in err (que)'], err: [] });
    expect((await rq(['cancel', '--msg_id', id])).out).toEqual(['ok msg cancelled']);
  });

  it('refuses bad flags and unknown messages: exit 1, the reason on one line, nothing changed', async () => {
    const id = await send('test', '--param1', 'err');
    await test.waitState(shortId(id), ['err']);
    expect(await rq(['requeue', '--msg_id', id, '--delay', '-1'])).toEqual({
      code: 1,
      out: ['fail delay: expected seconds >= 0, ending by 253402300799 (the end of year 9999), received "-1"'],
      err: [],
    });
    expect(await rq(['requeue', '--msg_id', id, '--due', 'soon'])).toEqual({
      code: 1,
      out: ['fail due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received "soon"'],
      err: [],
    });
    expect(await rq(['requeue', '--msg_id', id, '--due', '1', '--delay', '1'])).toEqual({ code: 1, out: ['fail give due or delay, not both'], err: [] });
    expectOneLineError(await rq(['requeue', '--msg_id', id, '--reset=yes']), /^rq: --reset: expected no value \(a flag\), received "yes"$/, 2);
    expectOneLineError(await rq(['history', '--msg_id', id, '--json=1']), /^rq: --json: expected no value \(a flag\), received "1"$/, 2);
    expectOneLineError(await rq(['cancel']), /^rq: --msg_id: expected a full message id .*, received nothing$/, 2);
    expectOneLineError(await rq(['cancel', '--msg_id', id, '--reason']), /^rq: --reason: expected a reason text, received no value$/, 2);
    expect(await test.state(shortId(id))).toBe('err');
    for (const cmd of ['cancel', 'requeue', 'history']) {
      expect(await rq([cmd, '--msg_id', 'test/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    }
    expectOneLineError(await rq(['cancel', '--msg_id', 'nosuch/20200101.0000.00.000.1']), /^rq: queue not found: nosuch$/);
  });
});

describe('rq cancel --purge --wait (rq-beyond §B5)', () => {
  it('--wait on a running message prints the cancel line, then the final status once the script is gone', async () => {
    const { id, pid } = await runForever('test', 'wait-run');
    const r = await rq(['cancel', '--msg_id', id, '--reason', 'stop now', '--wait=20'], AS_ALICE);
    expect(r).toEqual({ code: 0, out: ['ok msg cancelling', 'ok err - CANCELLED - stop now'], err: [] });
    // The second line is printed only after the end: the message is already in err.
    expect(await test.state(shortId(id))).toBe('err');
    await groupGone(pid);
  });

  it('--purge --wait on a running message prints ok deleted, and the message is gone', async () => {
    const { id, pid } = await runForever('test', 'purge-run');
    expect(await rq(['cancel', '--msg_id', id, '--purge', '--wait'])).toEqual({ code: 0, out: ['ok msg cancelling', 'ok deleted'], err: [] });
    expect(await rq(['state', '--msg_id', id])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    await groupGone(pid);
  });

  it('--purge --wait on a queued message prints ok deleted as well', async () => {
    // The purge of a que message is over before `ok msg cancelled`, so the wait asks about a message already removed.
    const id = await send('test', '--param1', 'done', '--due', later());
    expect(await rq(['cancel', '--msg_id', id, '--purge', '--wait=5'])).toEqual({ code: 0, out: ['ok msg cancelled', 'ok deleted'], err: [] });
    expect(await rq(['state', '--msg_id', id])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });

  it('a bad --wait is a usage error before anything is sent: the message is not cancelled', async () => {
    const id = await send('test', '--param1', 'done', '--due', later());
    for (const v of ['abc', '0', '86401']) {
      expectOneLineError(
        await rq(['cancel', '--msg_id', id, `--wait=${v}`]),
        new RegExp(`^rq: --wait: expected whole seconds from 1 to 86400, received "${v}"$`),
        2,
      );
    }
    expect(await test.state(shortId(id))).toBe('que');
    expect((await rq(['cancel', '--msg_id', id])).out).toEqual(['ok msg cancelled']);
  });
});

describe('rq requeue --queue (rq-beyond §B6)', () => {
  it('sends every err message of the queue back (of one outcome, up to a limit) and prints how many', async () => {
    const failed = [await send('errs', '--param1', 'err'), await send('errs', '--param1', 'err')];
    for (const id of failed) await errs.waitState(shortId(id), ['err']);
    const cancelled = await send('errs', '--param1', 'done', '--due', later());
    expect((await rq(['cancel', '--msg_id', cancelled])).out).toEqual(['ok msg cancelled']);
    // Paused, so a requeued `err` message stays in the que instead of failing again before the next count.
    await fs.writeFile(path.join(t.root, 'config', 'errs.pause'), '');
    await waitFor(async () => (await errs.cmd('status'))[0] === 'PAUSE', 'errs to pause');

    expectOneLineError(await rq(['requeue', '--queue', 'errs', '--msg_id', failed[0]]), /^rq: --msg_id and --queue: expected one of them, received both$/, 2);
    // Options of a one-message requeue would be silently lost on the whole queue: refused instead.
    expectOneLineError(
      await rq(['requeue', '--queue', 'errs', '--reset']),
      /^rq: --reset: applies to one message \(--msg_id\); with --queue, every message is requeued as it is, due now$/,
      2,
    );
    expectOneLineError(await rq(['requeue', '--queue', 'errs', '--delay', '60']), /^rq: --delay: applies to one message/, 2);
    expect(await rq(['requeue', '--queue', 'errs', '--outcome', 'nope'])).toEqual({
      code: 1,
      out: [expect.stringMatching(/^fail outcome: expected one of /)],
      err: [],
    });
    expect((await errs.cmd('num_messages')).err).toBe(3);

    expect(await rq(['requeue', '--queue', 'errs', '--outcome', 'cancelled'], AS_ALICE)).toEqual({ code: 0, out: ['ok 1 requeued'], err: [] });
    expect(await errs.state(shortId(cancelled))).toBe('que');
    expect((await errs.cmd('get_history', { msg_id: shortId(cancelled) }))[1].at(-1)).toMatchObject({ from: 'err', to: 'que', actor: 'cli:alice' });
    expect(await rq(['requeue', '--queue', 'errs', '--limit', '1'])).toEqual({ code: 0, out: ['ok 1 requeued'], err: [] });
    expect(await rq(['requeue', '--queue', 'errs'])).toEqual({ code: 0, out: ['ok 1 requeued'], err: [] });
    expect(await Promise.all(failed.map((id) => errs.state(shortId(id))))).toEqual(['que', 'que']);
    expect(await rq(['requeue', '--queue', 'errs'])).toEqual({ code: 0, out: ['ok 0 requeued'], err: [] });
  });
});

describe('rq running and waiting (rq-beyond §B11, §B2)', () => {
  const ISO_RE = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z';

  it('running prints one line per running message with its pid, and --json the entries', async () => {
    const { id, pid } = await runForever('lists', 'listed', '--timeout', '600');
    const r = await rq(['running', '--queue', 'lists']);
    expect(r.code).toBe(0);
    expect(r.err).toEqual([]);
    expect(r.out[0]).toBe('ok 1');
    const m = new RegExp(
      `^lists/${shortId(id)} pid ${pid} attempt 1 started (${ISO_RE}) last_beat ${ISO_RE} silent \\d+(\\.\\d+)?s deadline (${ISO_RE})$`,
    ).exec(r.out[1]);
    expect(m, r.out[1]).not.toBeNull();
    expect(Date.parse(m![3]) - Date.parse(m![1])).toBe(600_000);
    expect(r.out).toHaveLength(2);

    const j = await rq(['running', '--queue', 'lists', '--json']);
    expect(j.code).toBe(0);
    expect(j.out).toHaveLength(1);
    expect(JSON.parse(j.out[0])).toEqual([expect.objectContaining({ msg_id: shortId(id), pid, attempt: 1 })]);

    expect((await rq(['cancel', '--msg_id', id, '--wait=20'])).code).toBe(0);
    expect(await rq(['running', '--queue', 'lists'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('waiting prints a delayed message with its due, filters by reason, and refuses a bad one', async () => {
    const due = Math.floor(Date.now() / 1000) + 3600;
    const id = await send('lists', '--param1', 'done', '--due', String(due));
    const line = `lists/${shortId(id)} delayed due ${new Date(due * 1000).toISOString()}`;
    expect(await rq(['waiting', '--queue', 'lists'])).toEqual({ code: 0, out: ['ok 1', line], err: [] });
    expect(await rq(['waiting', 'lists'])).toEqual({ code: 0, out: ['ok 1', line], err: [] });
    expect(await rq(['waiting', '--queue', 'lists', '--reason', 'delayed', '--limit', '5'])).toEqual({ code: 0, out: ['ok 1', line], err: [] });
    expect(await rq(['waiting', '--queue', 'lists', '--reason', 'coalesced'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    const j = await rq(['waiting', '--queue', 'lists', '--json']);
    expect(JSON.parse(j.out[0])).toEqual([{ msg_id: shortId(id), reason: 'delayed', due }]);
    expect(await rq(['waiting', '--queue', 'lists', '--reason', 'sleepy'])).toEqual({
      code: 1,
      out: ['fail reason: expected one of delayed, coalesced, dependencies, limit, received "sleepy"'],
      err: [],
    });
    expectOneLineError(await rq(['waiting']), /^rq: --queue: expected a queue name \(rq waiting <queue>\), received nothing$/, 2);
    expect((await rq(['cancel', '--msg_id', id])).out).toEqual(['ok msg cancelled']);
    expect(await rq(['waiting', '--queue', 'lists'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });
});
