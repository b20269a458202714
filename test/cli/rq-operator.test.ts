// The operator's commands against a real rq-mgr and its queues: rq queues, ls, retry, rm, pause and resume.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MgrProc } from '../helpers/mgr-proc.js';
import { killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let mgr: MgrProc;
const groups = killLeftoverGroups();

function rq(args: string[], root = t.root): Promise<Run> {
  return runRq(args, { root });
}

const shortId = (fullId: string) => fullId.split('/').pop()!;
const COUNTS = (c: Record<string, number>) => ['prep', 'que', 'run', 'done', 'relayed', 'err', 'err_acked'].map((k) => `${k} ${c[k] ?? 0}`).join(' ');

const send = (dest: string, ...args: string[]): Promise<string> => sendmesg(rq, dest, ...args);

/** Sends and waits for the end with rq wait itself; the id. */
async function finished(dest: string, param1: string, ...args: string[]): Promise<string> {
  const id = await send(dest, '--param1', param1, ...args);
  expect((await rq(['wait', id, '--timeout', '30'])).code).toBe(param1 === 'done' ? 0 : 1);
  return id;
}

beforeAll(async () => {
  t = await makeRoot();
  for (const q of ['ops', 'lsq', 'idle']) await addQueue(t.root, q, { num_workers: 2 });
  mgr = await MgrProc.start(t.root);
  for (const q of ['ops', 'lsq', 'idle']) await mgr.waitQueueUp(q);
});

afterAll(async () => {
  await mgr?.stop();
  await t?.cleanup();
});

describe('rq ls', () => {
  it("lists a queue's messages newest first, by state, a page at a time", async () => {
    const done = [await finished('lsq', 'done'), await finished('lsq', 'done'), await finished('lsq', 'done')].map(shortId);
    const err = shortId(await finished('lsq', 'err'));
    const newest = [...done].reverse();
    expect(await rq(['ls', 'lsq', '--state', 'done'])).toEqual({ code: 0, out: ['ok 3', ...newest.map((id) => `lsq/${id} done`)], err: [] });
    expect((await rq(['ls', 'lsq', '--state', 'done', '--limit', '2'])).out).toEqual(['ok 3', `lsq/${newest[0]} done`, `lsq/${newest[1]} done`]);
    expect((await rq(['ls', '--queue', 'lsq', '--state', 'done', '--limit', '2', '--offset', '2'])).out).toEqual(['ok 3', `lsq/${newest[2]} done`]);
    expect((await rq(['ls', 'lsq'])).out).toEqual(['ok 4', `lsq/${err} err`, ...newest.map((id) => `lsq/${id} done`)]);
    const page = JSON.parse((await rq(['ls', 'lsq', '--state', 'err', '--json'])).out[0]);
    expect(page).toMatchObject({ total: 1, messages: [{ msg_id: err, state: 'err', fields: { param1: 'err' } }] });
  });

  it('refuses a bad state or page with exit 2 and a line naming the option', async () => {
    expectOneLineError(await rq(['ls', 'lsq', '--state', 'bogus']), /^rq: --state: expected one of prep, que, run, done, relayed, err, received "bogus"$/, 2);
    expectOneLineError(await rq(['ls', 'lsq', '--limit', '0']), /^rq: --limit: expected a whole number from 1 to 1000, received "0"$/, 2);
    expectOneLineError(await rq(['ls', 'lsq', '--limit']), /^rq: --limit: expected a whole number, received no value$/, 2);
    expectOneLineError(await rq(['ls']), /^rq: --queue: expected a queue name \(rq ls <queue>\), received nothing$/, 2);
    expectOneLineError(await rq(['ls', 'nosuch']), /^rq: queue not found: nosuch$/, 1);
  });
});

describe('rq retry and rq rm', () => {
  it('retry sends an err message back to run again under its id; a message not in err is refused', async () => {
    const gate = path.join(t.root, 'gate');
    const id = await finished('ops', 'gate', '--param2', gate);
    await fs.writeFile(gate, '');
    expect(await rq(['retry', id])).toEqual({ code: 0, out: ['ok msg requeued'], err: [] });
    expect(await rq(['wait', id, '--timeout', '30'])).toEqual({ code: 0, out: ['ok done - gate open'], err: [] });
    expect(await rq(['retry', `ops/${shortId(id)}`, '--reset'])).toEqual({ code: 1, out: ['fail msg not in err (done)'], err: [] });
  });

  it('rm deletes a finished or waiting message and refuses a running one', async () => {
    const done = await finished('ops', 'done');
    expect(await rq(['rm', done])).toEqual({ code: 0, out: ['ok msg deleted'], err: [] });
    expect(await rq(['state', '--msg_id', done])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    const pidFile = path.join(t.root, 'forever.pid');
    const running = await send('ops', '--param1', 'forever', '--param2', pidFile);
    groups.push(await pidInFile(pidFile));
    expect(await rq(['rm', running])).toEqual({ code: 1, out: ['fail msg is running: destroy it, or cancel it with purge, first'], err: [] });
    expect((await rq(['cancel', '--msg_id', running, '--purge', '--wait=20'])).out).toEqual(['ok msg cancelling', 'ok deleted']);
    expect(await rq(['rm', running])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });
});

describe("text from a message on the operator's terminal", () => {
  it('shows control characters as \\u escapes: a status cannot retitle or clear the terminal; --json still parses to the same text', async () => {
    const hostile = 'x\u001b]0;PWNED\u0007y\u001b[2J\u009bz\u202ed';
    const id = await send('ops', '--param1', 'fatal', '--param2', hostile);
    await rq(['wait', id, '--timeout', '30']);
    const r = await rq(['statusmesg', id]);
    expect(r.out).toEqual(['ok err - x\\u001b]0;PWNED\\u0007y\\u001b[2J\\u009bz\\u202ed']);
    expect(r.out.join('')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    const json = await rq(['ls', 'ops', '--state', 'err', '--json']);
    expect(json.out.join('\n')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.stringify(JSON.parse(json.out.join('\n')))).toContain(JSON.stringify(hostile).slice(1, -1));
  });
});

describe('rq queues, pause and resume', () => {
  it('lists every queue with its status and counts, paused ones too, and resume lets the held message run', async () => {
    expect(await rq(['pause', 'idle'])).toEqual({ code: 0, out: ['ok queue idle paused'], err: [] });
    const held = await send('idle', '--param1', 'done');
    const r = await rq(['queues']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe('ok 3');
    expect(r.out[1]).toBe(`idle PAUSE ${COUNTS({ que: 1 })}`);
    expect(r.out.slice(2).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['lsq UP', 'ops UP']);
    expect(r.out[2]).toBe(`lsq UP ${COUNTS({ done: 3, err: 1 })}`);
    const json = JSON.parse((await rq(['queues', '--json'])).out[0]);
    expect(json[0]).toEqual({ queue: 'idle', status: 'PAUSE', counts: expect.objectContaining({ que: 1, run: 0 }) });
    expect(await rq(['state', '--msg_id', held])).toMatchObject({ out: ['ok que'] });
    // A wait on it says once why it may be long, and how to lift it.
    const short = held.split('/').pop();
    expect(await rq(['wait', held, '--timeout', '1'])).toEqual({
      code: 4,
      out: ['fail timed out'],
      err: [`rq: idle/${short} waits in que: queue idle is PAUSE; rq resume idle lets it run`],
    });
    expect(await rq(['resume', '--queue', 'idle'])).toEqual({ code: 0, out: ['ok queue idle resumed'], err: [] });
    expect(await rq(['wait', held, '--timeout', '30'])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
  });

  it('down refuses new messages and up undoes it; each says what the other file still holds', async () => {
    expect(await rq(['down', 'idle'])).toEqual({ code: 0, out: ['ok queue idle down'], err: [] });
    expect((await rq(['sendmesg', '--dest', 'idle', '--param1', 'done'])).out).toEqual(['fail status: DOWN']);
    // resume removes the pause file only: a queue that is down stays down, and is said so.
    expect(await rq(['resume', 'idle'])).toEqual({ code: 0, out: ['ok queue idle resumed (it is still DOWN: rq up idle)'], err: [] });
    expect(await rq(['pause', 'idle'])).toEqual({ code: 0, out: ['ok queue idle paused (it is DOWN too: rq up idle)'], err: [] });
    expect(await rq(['up', 'idle'])).toEqual({ code: 0, out: ['ok queue idle up (it is still paused: rq resume idle)'], err: [] });
    expect(await rq(['down', 'idle'])).toEqual({ code: 0, out: ['ok queue idle down (it is paused too: rq resume idle)'], err: [] });
    expect(await rq(['up', 'idle'])).toMatchObject({ code: 0 });
    expect(await rq(['resume', 'idle'])).toEqual({ code: 0, out: ['ok queue idle resumed'], err: [] });
    expect((await rq(['queues'])).out.find((l) => l.startsWith('idle '))).toMatch(/^idle UP /);
  });

  it('names a queue that does not exist, and rq-mgr when it does not answer (exit 3)', async () => {
    expectOneLineError(await rq(['pause', 'nosuch']), /^rq: queue not found: nosuch$/, 1);
    expectOneLineError(await rq(['pause']), /^rq: --queue: expected a queue name \(rq pause <queue>\), received nothing$/, 2);
    const bare = await makeRoot();
    try {
      await addQueue(bare.root, 'q');
      expectOneLineError(await rq(['resume', 'q'], bare.root), /^rq: rq-mgr does not answer, and it resumes queues \(no reply from .*queuemgr\.sock/, 3);
      // No queue answers and rq-mgr is not running: that is the one line (test/cli/fan-out.test.ts).
      expectOneLineError(
        await rq(['queues'], bare.root),
        /^rq: rq-mgr is not running \(no answer on .*queuemgr\.sock\); start it with bin\/rq-mgr start --root /,
        3,
      );
    } finally {
      await bare.cleanup();
    }
  });
});
