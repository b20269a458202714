// A message named by its id alone, in every command that takes one: its queue found by asking every queue of the root (one holds it, several, none), refusals with this root's own host and port.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mgrRootForFile } from '../helpers/per-test-root.js';
import { type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';

const root = mgrRootForFile({ alpha: {}, beta: {} });

function rq(args: string[]): Promise<Run> {
  return runRq(args, { root: root.t.root });
}

/** Sends to `dest` and returns the full id printed. */
const send = (dest: string, ...args: string[]): Promise<string> => sendmesg(rq, dest, ...args);

const shortId = (full: string) => full.split('/').pop()!;

describe('a message id alone', () => {
  it('works wherever a message id goes, as the word after the command or as --msg_id, like its full id', async () => {
    const full = await send('beta', '--param1', 'done');
    const id = shortId(full);
    expect(await rq(['wait', id, '--timeout', '30'])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
    expect(await rq(['statusmesg', id])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
    expect(await rq(['statusmesg', '--msg_id', id])).toEqual(await rq(['statusmesg', '--msg_id', full]));
    expect(await rq(['state', id, '--json'])).toEqual({ code: 0, out: [JSON.stringify({ queue: 'beta', msg_id: id, state: 'done' })], err: [] });
    expect(await rq(['statuscountmesg', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    expect(await rq(['attachstatusmesg', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    expect(await rq(['tag', id, '--add', 'seen'])).toEqual({ code: 0, out: ['ok seen'], err: [] });
    expect((await rq(['history', id])).out[0]).toMatch(/^ok \d+$/);
    const clone = await rq(['clone', id]);
    expect(clone.out[0]).toMatch(new RegExp(`^ok http://127\\.0\\.0\\.1:${root.t.port}/q/beta/`));
    expect(await rq(['wait', shortId(clone.out[0]), '--timeout', '30'])).toMatchObject({ code: 0 });

    const failed = shortId(await send('alpha', '--param1', 'err'));
    expect((await rq(['wait', failed, '--timeout', '30'])).code).toBe(1);
    expect(await rq(['retry', failed])).toEqual({ code: 0, out: ['ok msg requeued'], err: [] });
  });

  it("a full id under another host's URL is read as its queue and id, as classic, on a root in no fleet", async () => {
    const full = await send('beta', '--param1', 'done');
    expect(await rq(['wait', full, '--timeout', '30'])).toMatchObject({ code: 0 });
    const elsewhere = full.replace(/^http:\/\/127\.0\.0\.1:\d+\//, 'http://other.example:9/');
    expect(elsewhere).not.toBe(full);
    expect(await rq(['statusmesg', elsewhere])).toEqual(await rq(['statusmesg', full]));
  });

  it('in several queues is refused naming them, and <queue>/<id> picks one', async () => {
    const id = shortId(await send('alpha', '--param1', 'done'));
    await rq(['wait', id, '--timeout', '30']);
    // The same id in beta too: a copy of alpha's finished message dir, at the same hashed place.
    const done = path.join(root.t.root, 'queues', 'alpha', 'done');
    const rel = (await fs.readdir(done, { recursive: true })).find((p) => p.endsWith(id))!;
    await fs.cp(path.join(done, rel), path.join(root.t.root, 'queues', 'beta', 'done', rel), { recursive: true });
    try {
      expectOneLineError(
        await rq(['state', id]),
        new RegExp(
          `^rq: --msg_id: expected the id of a message in one queue, received "${id.replace(/\./g, '\\.')}", which is in 2 queues \\(alpha, beta\\): name one as <queue>/<id>, such as alpha/${id.replace(/\./g, '\\.')}$`,
        ),
        2,
      );
      expect(await rq(['state', `beta/${id}`])).toEqual({ code: 0, out: ['ok done'], err: [] });
    } finally {
      await fs.rm(path.join(root.t.root, 'queues', 'beta', 'done', rel), { recursive: true });
    }
    expect(await rq(['state', id])).toEqual({ code: 0, out: ['ok done'], err: [] });
  });

  it('is found in a queue that is DOWN too, which then gives its own answer', async () => {
    const id = shortId(await send('beta', '--param1', 'done'));
    await rq(['wait', id, '--timeout', '30']);
    const down = path.join(root.t.root, 'config', 'beta.down');
    await fs.writeFile(down, '');
    try {
      expect(await root.mgr.q('beta', 'status')).toEqual(['DOWN']);
      expect(await rq(['statusmesg', id])).toEqual({ code: 1, out: ['fail status: DOWN'], err: [] });
      expect((await rq(['history', id])).out[0]).toMatch(/^ok \d+$/);
    } finally {
      await fs.rm(down);
    }
    expect(await root.mgr.q('beta', 'status')).toEqual(['UP']);
  });

  it('in no queue is one line naming the queues asked, exit 6, for classic and newer commands alike', async () => {
    for (const cmd of [['statusmesg'], ['wait'], ['rm'], ['cancel']]) {
      expectOneLineError(
        await rq([...cmd, '20200101.0000.00.000.1']),
        /^rq: msg not found: no queue of this root holds 20200101\.0000\.00\.000\.1 \(asked 2: alpha, beta\)$/,
        6,
      );
    }
  });

  it("a malformed id is refused with a full id of this root as the example (its host and port), not another install's", async () => {
    for (const args of [['statusmesg', 'garbage'], ['wait', '--msg_id', 'garbage'], ['history']]) {
      const r = await rq(args);
      expectOneLineError(
        r,
        /^rq: --msg_id: expected a full message id such as http:\/\/127\.0\.0\.1:\d+\/q\/<queue>\/\S+ \(or <queue>\/<id>, or the id alone\), received /,
        2,
      );
      expect(r.err[0]).toContain(`http://127.0.0.1:${root.t.port}/q/<queue>/`);
    }
  });
});
