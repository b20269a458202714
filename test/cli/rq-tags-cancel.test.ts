// rq's commands over tagged messages against real queue processes (rq-beyond §B5, §B9.3, §B1.12): cancel --tag,
// rq-mgr reindex, and the refusals of bad input (exit 1, one line, nothing changed).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupMembers, killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { expectOneLineError } from '../helpers/rq-cli.js';
import { QueueProc, addQueue, waitFor } from '../helpers/rq-root.js';
import { AS_ALICE, TAG_TEXT, shortId, tagRoot } from './rq-tags-harness.js';

const s = tagRoot();
const { rq, rqMgr, send, waiting, message } = s;
const groups = killLeftoverGroups();

describe('rq cancel --tag (rq-beyond §B5)', () => {
  it('cancels every prep, que and running message with the tag in every queue, and prints the sum', async () => {
    const pidFile = path.join(s.t.root, 'batch.pid');
    const running = await send('beta', '--param1', 'forever', '--param2', pidFile, '--tags', 'batch');
    const pid = await pidInFile(pidFile);
    groups.push(pid);
    const queued = [await waiting('alpha', '--tags', 'batch'), await waiting('alpha', '--tags', 'batch,keep'), await waiting('beta', '--tags', 'batch')];
    const finished = await send('alpha', '--param1', 'done', '--tags', 'batch');
    await s.alpha.waitState(shortId(finished), ['done']);
    const untagged = await waiting('alpha');

    expect(await rq(['cancel', '--tag', 'batch', '--reason', 'bad batch'], AS_ALICE)).toEqual({ code: 0, out: ['ok 4 cancelled'], err: [] });
    for (const id of queued) expect(await message(id)).toMatchObject({ state: 'err', outcome: 'cancelled', cancel: { by: 'cli:alice', reason: 'bad batch' } });
    expect(await s.beta.waitState(shortId(running), ['err'])).toMatchObject({ outcome: 'cancelled' });
    await waitFor(async () => (await groupMembers(pid)).length === 0, `group ${pid} to be gone`);
    expect(await s.alpha.state(shortId(finished))).toBe('done');
    expect(await s.alpha.state(shortId(untagged))).toBe('que');
    expect(await rq(['cancel', '--tag', 'batch'])).toEqual({ code: 0, out: ['ok 0 cancelled'], err: [] });
  });

  it('with --queue cancels in that queue only', async () => {
    const [a, b] = [await waiting('alpha', '--tags', 'only'), await waiting('beta', '--tags', 'only')];
    expect(await rq(['cancel', '--tag', 'only', '--queue', 'beta'])).toEqual({ code: 0, out: ['ok 1 cancelled'], err: [] });
    expect(await s.alpha.state(shortId(a))).toBe('que');
    expect(await s.beta.state(shortId(b))).toBe('err');
  });
});

describe('bad input (rq-beyond §B1.12): one line, exit 1, nothing sent or changed', () => {
  it('refuses malformed and missing tags, options that do not go together, and unknown queues', async () => {
    const id = await waiting('alpha', '--tags', 'stay');
    const before = (await s.alpha.cmd('num_messages')) as Record<string, number>;

    expectOneLineError(
      await rq(['sendmesg', '--dest', 'alpha', '--tags', 'ok,a b']),
      new RegExp(`^rq: --tags\\[1\\]: expected ${TAG_TEXT}, received "a b"$`),
      2,
    );
    expectOneLineError(
      await rq(['sendmesg', '--dest', 'alpha', '--tags']),
      /^rq: --tags: expected a value \(--tags a,b or --tags=a,b\), received no value$/,
      2,
    );
    const many = Array.from({ length: 40 }, (_, i) => `t${i}`).join(',');
    expectOneLineError(await rq(['sendmesg', '--dest', 'alpha', '--tags', many]), /^rq: --tags: expected at most 32 tags, received 40$/, 2);

    expectOneLineError(await rq(['tag', '--msg_id', id, '--add', 'a/b']), new RegExp(`^rq: --add\\[0\\]: expected ${TAG_TEXT}, received "a/b"$`), 2);
    expectOneLineError(await rq(['tag', '--msg_id', id, '--remove', 'stay,-x']), new RegExp(`^rq: --remove\\[1\\]: expected ${TAG_TEXT}, received "-x"$`), 2);
    expectOneLineError(await rq(['tag', '--msg_id', id]), /^rq: --add or --remove: expected at least one tag, received neither$/, 2);
    expectOneLineError(await rq(['tag', '--msg_id', id, '--add']), /^rq: --add: expected a comma-separated list of tags, received no value$/, 2);
    expectOneLineError(await rq(['track']), /^rq: --msg_id: expected a full message id .*, received nothing$/, 2);

    expectOneLineError(await rq(['tagged']), new RegExp(`^rq: --tag: expected ${TAG_TEXT}, received nothing$`), 2);
    expectOneLineError(await rq(['tagged', '--tag', 'a b']), new RegExp(`^rq: --tag: expected ${TAG_TEXT}, received "a b"$`), 2);
    expectOneLineError(await rq(['tagged', '--tag', 'stay', '--queue', 'nosuch']), /^rq: queue not found: nosuch$/);
    expectOneLineError(await rq(['tagged', '--tag', 'stay', '--queue', 'a/b']), /^rq: --queue: queue name: expected letters, digits/, 2);
    expectOneLineError(
      await rq(['tagged', '--tag', 'stay', '--state', 'finished']),
      /^rq: --state: expected one of prep, que, run, done, relayed, err, received "finished"$/,
      2,
    );
    expectOneLineError(await rq(['tagged', '--tag', 'stay', '--limit', '0']), /^rq: --limit: expected a whole number from 1 to 1000, received "0"$/, 2);
    expectOneLineError(await rq(['tagged', '--tag', 'stay', '--offset', 'x']), /^rq: --offset: expected a whole number from 0 to 10000000, received "x"$/, 2);
    expectOneLineError(await rq(['tags']), /^rq: --queue: expected a queue name \(rq tags <queue>\), received nothing$/, 2);
    expectOneLineError(await rq(['tags', '--queue', 'nosuch']), /^rq: queue not found: nosuch$/);

    expectOneLineError(await rq(['cancel', '--tag', 'stay', '--msg_id', id]), /^rq: --msg_id and --tag: expected one of them, received both$/, 2);
    expectOneLineError(await rq(['cancel', '--tag', 'stay', '--purge']), /^rq: --purge: applies to one message \(--msg_id\)/, 2);
    expectOneLineError(await rq(['cancel', '--tag', 'stay', '--wait=5']), /^rq: --wait: applies to one message \(--msg_id\)/, 2);
    expectOneLineError(await rq(['cancel', '--tag']), new RegExp(`^rq: --tag: expected ${TAG_TEXT}, received no value$`), 2);
    expectOneLineError(await rq(['cancel', '--tag', 'a,b']), new RegExp(`^rq: --tag: expected ${TAG_TEXT}, received "a,b"$`), 2);
    expectOneLineError(await rq(['cancel', '--tag', 'stay', '--queue', 'nosuch']), /^rq: queue not found: nosuch$/);
    expectOneLineError(
      await rq(['cancel', '--tag', 'stay', '--reason', 'x'.repeat(1001)]),
      /^rq: --reason: expected text of at most 1000 characters without NUL, received 1001 characters$/,
      2,
    );

    expect(await s.alpha.cmd('num_messages')).toEqual(before);
    expect(await message(id)).toMatchObject({ state: 'que', tags: ['stay'] });
  });

  it('a queue that does not answer is named on stderr; the others still list and cancel, and the status is fail', async () => {
    const id = await waiting('alpha', '--tags', 'partial');
    await addQueue(s.t.root, 'dead'); // a queue directory whose process is not running
    try {
      const listed = await rq(['tagged', '--tag', 'partial']);
      expect(listed.code).toBe(1);
      expect(listed.out).toEqual(['fail 1', `${id} que`]);
      expect(listed.err).toEqual([expect.stringMatching(/^rq: queue dead: its process does not answer \(.*ENOENT.*\)$/)]);

      const cancelled = await rq(['cancel', '--tag', 'partial']);
      expect(cancelled).toEqual({ code: 1, out: ['fail 1 cancelled'], err: [expect.stringMatching(/^rq: queue dead: its process does not answer/)] });
      expect(await s.alpha.state(shortId(id))).toBe('err');
    } finally {
      await fs.rm(path.join(s.t.root, 'queues', 'dead'), { recursive: true, force: true });
    }
  });
});

describe('rq-mgr reindex (rq-beyond §B9.3)', () => {
  it("rebuilds a queue's tag index from its messages: an index entry no msg backs is gone, and it prints the pairs", async () => {
    const id = await waiting('counts', '--tags', 'real');
    await s.counts.stop();
    // The index is derived data: one line that no msg backs (a hand edit, a restored backup) over-counts.
    await fs.appendFile(s.counts.paths.tagsFile, `${JSON.stringify({ id: shortId(id), add: ['ghost'], at: Date.now() })}\n`);
    s.counts = await QueueProc.start(s.t.root, 'counts');
    expect((await rq(['tags', '--queue', 'counts'])).out).toContain('ghost 1');

    const r = await rqMgr(['reindex', 'counts']);
    expect(r.err).toEqual([]);
    expect(r.code).toBe(0);
    const after = await rq(['tags', '--queue', 'counts']);
    expect(after.out).not.toContain('ghost 1');
    expect(after.out).toContain('real 1');
    const pairs = after.out.slice(1).reduce((n, line) => n + Number(line.split(' ')[1]), 0);
    expect(r.out).toEqual([`ok ${pairs}`]);
  });

  it('refuses a missing or unknown queue on one stderr line, exit 1', async () => {
    expectOneLineError(await rqMgr(['reindex']), /^rq-mgr: reindex: queue name: expected a queue name \(rq-mgr reindex <queue>\), received nothing$/);
    expectOneLineError(await rqMgr(['reindex', 'nosuch']), /^rq-mgr: reindex: queue not found: nosuch$/);
    expectOneLineError(await rqMgr(['reindex', 'a.b']), /^rq-mgr: reindex: queue name: expected letters, digits/);
  });
});
