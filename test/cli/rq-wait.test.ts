// rq wait, sendmesg --wait and rq tail against real queue processes: they return when the message finishes, by its outcome.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RQ_BIN, type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let test: QueueProc;

function rq(args: string[]): Promise<Run> {
  return runRq(args, { root: t.root });
}

const FULLID = /^ok (http:\/\/127\.0\.0\.1:\d+\/q\/test\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+)$/;
const shortId = (fullId: string) => fullId.split('/').pop()!;
const NO_MSG = 'test/20200101.0000.00.000.1';

const send = (...args: string[]): Promise<string> => sendmesg(rq, 'test', ...args);

/** The queue holds what is sent while it is paused (config/test.pause), so a waiter starts before the run. */
const pauseFile = () => path.join(t.root, 'config', 'test.pause');
async function paused<T>(body: () => Promise<T>): Promise<T> {
  await fs.writeFile(pauseFile(), '');
  expect(await test.cmd('status')).toEqual(['PAUSE']);
  try {
    return await body();
  } finally {
    await fs.rm(pauseFile(), { force: true });
  }
}

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'test', { num_workers: 2 });
  await addQueue(t.root, 'dead');
  test = await QueueProc.start(t.root, 'test');
});

afterAll(async () => {
  await test?.stop();
  await t?.cleanup();
});

describe('rq wait', () => {
  it('blocks until a queued message has run, then prints its final status and exits 0 for done', async () => {
    const { id, waiting } = await paused(async () => {
      const sent = await send('--param1', 'done');
      const w = rq(['wait', sent]);
      // Still queued: whatever the waiter saw, it cannot have seen the end yet.
      expect(await test.state(shortId(sent))).toBe('que');
      return { id: sent, waiting: w };
    });
    expect(await waiting).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
    expect(await test.state(shortId(id))).toBe('done');
  });

  it('exits 1 for err, 0 for relayed (a success, as for dependencies), and answers a finished message at once', async () => {
    const err = await send('--param1', 'err');
    expect(await rq(['wait', '--msg_id', err, '--timeout', '30'])).toEqual({ code: 1, out: ['ok err - by design'], err: [] });
    const relayed = await send('--param1', 'relayed', '--param2', 'http://127.0.0.1:1/q/x/20200101.0000.00.000.1');
    expect(await rq(['wait', `test/${shortId(relayed)}`])).toMatchObject({ code: 0, out: [expect.stringMatching(/^ok relayed/)] });
    expect(await rq(['wait', err, '--timeout', '0'])).toEqual({ code: 1, out: ['ok err - by design'], err: [] });
  });

  it('exits 4 when the message has not finished in time, 6 for no such message, 3 when the queue does not answer', async () => {
    const later = await send('--param1', 'done', '--due', String(Math.floor(Date.now() / 1000) + 3600));
    expect(await rq(['wait', later, '--timeout', '1'])).toEqual({ code: 4, out: ['fail timed out'], err: [] });
    expect(await rq(['wait', later, '--timeout', '0'])).toEqual({ code: 4, out: ['fail timed out'], err: [] });
    expect(await rq(['wait', NO_MSG])).toEqual({ code: 6, out: ['fail msg not found'], err: [] });
    expect(await rq(['wait', NO_MSG, '--timeout', '0'])).toEqual({ code: 6, out: ['fail msg not found'], err: [] });
    expectOneLineError(await rq(['wait', 'dead/20200101.0000.00.000.1']), /^rq: queue dead: its process does not answer/, 3);
    expectOneLineError(await rq(['wait', later, '--timeout', 'soon']), /^rq: --timeout: expected whole seconds from 0 to 2592000, received "soon"$/, 2);
    expectOneLineError(await rq(['wait']), /^rq: --msg_id: expected a full message id/, 2);
  });

  it('exits 6 when the message is deleted while waited for', async () => {
    const id = await send('--param1', 'done', '--due', String(Math.floor(Date.now() / 1000) + 3600));
    const waiting = rq(['wait', id, '--timeout', '60']);
    // The waiter may still be connecting: a delete before it looks is "not found", after it "deleted"; both are 6.
    expect(await rq(['rm', id])).toEqual({ code: 0, out: ['ok msg deleted'], err: [] });
    const r = await waiting;
    expect(r.code).toBe(6);
    expect(['ok deleted', 'fail msg not found']).toContain(r.out[0]);
  });

  it('lets a shell script branch on the outcome', async () => {
    const script = 'if "$0" wait "$1" --root "$2" >/dev/null; then echo "done"; else echo "failed $?"; fi';
    const sh = (id: string) =>
      new Promise<string>((resolve, reject) => execFile('sh', ['-c', script, RQ_BIN, id, t.root], (err, out) => (err ? reject(err) : resolve(out.trim()))));
    expect(await sh(await send('--param1', 'done'))).toBe('done');
    expect(await sh(await send('--param1', 'err'))).toBe('failed 1');
  });
});

describe('rq sendmesg --wait', () => {
  it('prints the id, then the final status, and exits by the outcome', async () => {
    const done = await rq(['sendmesg', '--dest', 'test', '--param1', 'done', '--wait']);
    expect(done.code).toBe(0);
    expect(done.out).toEqual([expect.stringMatching(FULLID), 'ok done - done sleeping']);
    expect(await test.state(shortId(FULLID.exec(done.out[0])![1]))).toBe('done');
    const err = await rq(['sendmesg', '--dest', 'test', '--param1', 'err', '--wait=30']);
    expect(err).toMatchObject({ code: 1, out: [expect.stringMatching(FULLID), 'ok err - by design'] });
    const late = await rq(['sendmesg', '--dest', 'test', '--param1', 'done', '--due', String(Math.floor(Date.now() / 1000) + 3600), '--wait', '1']);
    expect(late).toMatchObject({ code: 4, out: [expect.stringMatching(FULLID), 'fail timed out'] });
    expectOneLineError(await rq(['prepmesg', '--dest', 'test', '--wait']), /^rq: prepmesg: unknown option --wait/, 2);
  });
});

describe('rq tail', () => {
  it('prints the output of a running message as it comes and ends with the run, exiting by the outcome', async () => {
    const id = await paused(async () => {
      const sent = await send('--param1', 'chatty', '--param2', '4');
      return sent;
    });
    const r = await rq(['tail', id]);
    expect(r.code).toBe(0);
    expect(r.out.filter((l) => l === 'working')).toHaveLength(4);
    expect(await test.state(shortId(id))).toBe('done');
    // A finished message: its whole log at once.
    expect(await rq(['tail', `test/${shortId(id)}`])).toEqual(r);
  });

  it('follows a message that has not started yet', async () => {
    const { id, tailing } = await paused(async () => {
      const sent = await send('--param1', 'args', '--param2', 'x');
      return { id: sent, tailing: rq(['tail', sent]) };
    });
    const r = await tailing;
    expect(r.code).toBe(0);
    expect(r.out).toEqual([expect.stringMatching(/ - RQ START - .*verbs\.sh$/), expect.stringMatching(/^argc=\d$/)]);
    expect(await test.state(shortId(id))).toBe('done');
    const err = await send('--param1', 'err_exit1');
    expect((await rq(['tail', err])).code).toBe(1);
  });

  it('exits 6 for no such message', async () => {
    expectOneLineError(await rq(['tail', NO_MSG]), /^rq: tail: msg not found: test\/20200101\.0000\.00\.000\.1$/, 6);
  });
});
