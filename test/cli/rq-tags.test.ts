// rq's tag commands against real queue processes (rq-beyond §B9, §B1.10, §B1.12): sendmesg --tags, tag,
// track/untrack, tags, tagged and tracked (one queue, and every queue merged), cancel --tag, rq-mgr
// reindex, and the refusals of bad input (exit 1, one line, nothing changed).
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupMembers, killLeftoverGroups, pidInFile } from '../helpers/process-groups.js';
import { type Run, expectOneLineError, runRq, sendmesg } from '../helpers/rq-cli.js';
import { PROJECT, QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let alpha: QueueProc;
let beta: QueueProc;
let counts: QueueProc;
const groups = killLeftoverGroups();

function rq(args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return runRq(args, { env: opts.env, root: t.root });
}

/** The real bin/rq-mgr against the temp root. */
function rqMgr(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.RQ_ROOT;
    execFile(path.join(PROJECT, 'bin', 'rq-mgr'), [...args, '--root', t.root], { env }, (err, stdout, stderr) => {
      const lines = (s: string) => s.split('\n').filter((l) => l !== '');
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: lines(stdout), err: lines(stderr) });
    });
  });
}

const shortId = (fullId: string) => fullId.split('/').pop()!;
const AS_ALICE = { env: { USER: 'alice', LOGNAME: 'alice' } };
const later = () => String(Math.floor(Date.now() / 1000) + 3600);
const TAG_TEXT = 'a tag of 1-64 characters from A-Z a-z 0-9 \\. _ : @ \\+ - \\(starting with a letter or digit\\)';

const send = (dest: string, ...args: string[]): Promise<string> => sendmesg(rq, dest, ...args);

/** A message that waits in the que for an hour. */
const waiting = (dest: string, ...args: string[]) => send(dest, '--param1', 'done', '--due', later(), ...args);

const procOf = (fullId: string) => ({ alpha, beta, counts })[fullId.split('/').at(-2) as 'alpha' | 'beta' | 'counts'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function message(fullId: string): Promise<any> {
  return (await procOf(fullId).cmd('get_message', { msg_id: shortId(fullId) }))[1];
}

async function tagsOf(fullId: string): Promise<string[] | undefined> {
  return (await message(fullId)).tags;
}

beforeAll(async () => {
  t = await makeRoot();
  for (const q of ['alpha', 'beta', 'counts']) await addQueue(t.root, q);
  [alpha, beta, counts] = await Promise.all(['alpha', 'beta', 'counts'].map((n) => QueueProc.start(t.root, n)));
});

afterAll(async () => {
  await Promise.all([alpha?.stop(), beta?.stop(), counts?.stop()]);
  await t?.cleanup();
});

describe('rq help', () => {
  it('lists every tag command', async () => {
    const r = await runRq(['--help']);
    expect(r.code).toBe(0);
    const words = r.out.slice(1).map((l) => l.trim().split(/\s+/)[0]);
    expect(words).toEqual(expect.arrayContaining(['tag', 'track', 'untrack', 'tags', 'tagged', 'tracked']));
    expect((await runRq(['sendmesg', '--help'])).out).toContainEqual(expect.stringMatching(/^ {2}--tags a,b +up to 32 tags/));
    const cancel = (await runRq(['cancel', '--help'])).out;
    expect(cancel).toContainEqual(expect.stringMatching(/^ {2}--tag T +cancel every prep, que and running message with this tag/));
    expect(cancel).toContainEqual(expect.stringMatching(/^ {2}--queue QUEUE +with --tag: only this queue/));
  });
});

describe('rq sendmesg --tags, tag, track, untrack (rq-beyond §B9.1, §B9.4)', () => {
  it('sends tags with a message, then adds and removes them in que and in done, printing the list', async () => {
    const id = await waiting('alpha', '--tags', 'red,blue,red');
    expect(await tagsOf(id)).toEqual(['red', 'blue']);

    expect(await rq(['tag', '--msg_id', id, '--add', 'green,red', '--remove', 'blue'], AS_ALICE)).toEqual({ code: 0, out: ['ok red,green'], err: [] });
    expect(await tagsOf(id)).toEqual(['red', 'green']);
    const history = (await alpha.cmd('get_history', { msg_id: shortId(id) }))[1];
    expect(history.at(-1)).toMatchObject({ event: 'tags', actor: 'cli:alice', add: ['green'], remove: ['blue'] });

    expect(await rq(['track', '--msg_id', `alpha/${shortId(id)}`])).toEqual({ code: 0, out: ['ok red,green,track'], err: [] });
    expect(await rq(['untrack', '--msg_id', id])).toEqual({ code: 0, out: ['ok red,green'], err: [] });
    expect(await rq(['tag', '--msg_id', id, '--remove', 'red,green'])).toEqual({ code: 0, out: ['ok none'], err: [] });
    expect(await tagsOf(id)).toBeUndefined();

    // Any state: a finished message (in a hash dir) is tagged too.
    const done = await send('alpha', '--param1', 'done');
    await alpha.waitState(shortId(done), ['done']);
    expect(await rq(['track', '--msg_id', done])).toEqual({ code: 0, out: ['ok track'], err: [] });
    expect(await tagsOf(done)).toEqual(['track']);
    expect(await rq(['untrack', '--msg_id', done])).toEqual({ code: 0, out: ['ok none'], err: [] });
  });

  it('prints the queue\'s refusal for an unknown message, on stdout, exit 1', async () => {
    expect(await rq(['tag', '--msg_id', 'alpha/20200101.0000.00.000.1', '--add', 'x'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    expect(await rq(['track', '--msg_id', 'beta/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });
});

describe('rq tags and tagged of one queue (rq-beyond §B9.2)', () => {
  it('tags counts per tag, most used first then by name; tagged lists full ids newest tagging first, by state, by page', async () => {
    const [m1, m2, m3] = [await waiting('counts', '--tags', 'zeta,beta'), await waiting('counts', '--tags', 'alpha,zeta'), await waiting('counts', '--tags', 'beta,alpha')];
    const finished = await send('counts', '--param1', 'done', '--tags', 'zeta');
    await counts.waitState(shortId(finished), ['done']);

    expect(await rq(['tags', '--queue', 'counts'])).toEqual({ code: 0, out: ['ok 3', 'zeta 3', 'alpha 2', 'beta 2'], err: [] });
    // The queue as a word, as rq ls and rq stats take it; the tag of tagged likewise.
    expect(await rq(['tags', 'counts'])).toEqual({ code: 0, out: ['ok 3', 'zeta 3', 'alpha 2', 'beta 2'], err: [] });
    expect(await rq(['tagged', 'zeta', '--queue', 'counts'])).toEqual(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts']));
    const j = await rq(['tags', '--queue', 'counts', '--json']);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out[0])).toEqual({ zeta: 3, alpha: 2, beta: 2 });

    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts'])).toEqual({ code: 0, out: ['ok 3', `${finished} done`, `${m2} que`, `${m1} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts', '--state', 'que'])).toEqual({ code: 0, out: ['ok 2', `${m2} que`, `${m1} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts', '--offset', '1', '--limit', '1'])).toEqual({ code: 0, out: ['ok 3', `${m2} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'nobody', '--queue', 'counts'])).toEqual({ code: 0, out: ['ok 0'], err: [] });

    const tj = await rq(['tagged', '--tag', 'alpha', '--queue', 'counts', '--json']);
    expect(tj.code).toBe(0);
    const listing = JSON.parse(tj.out[0]);
    expect(listing).toMatchObject({ total: 2, gone: [] });
    expect(listing.messages.map((m: { queue: string; msg_id: string; state: string }) => [m.queue, m.msg_id, m.state])).toEqual([
      ['counts', shortId(m3), 'que'],
      ['counts', shortId(m2), 'que'],
    ]);
    expect(listing.messages[0]).toEqual(expect.objectContaining({ status: expect.any(String), due: expect.any(Number), priority: 0, tagged_at: expect.any(String) }));
  });
});

describe('rq tagged and tracked over every queue (rq-beyond §B9.2, §B9.4)', () => {
  it('merges the queues\' pages, most recently tagged first, across queues; --offset and --limit apply to the merge', async () => {
    const [a1, b1, a2, b2] = [await waiting('alpha'), await waiting('beta'), await waiting('alpha'), await waiting('beta')];
    // Tagged in this order, one after the other: the newest tagging is b2's.
    for (const id of [a1, b1, a2, b2]) expect((await rq(['tag', '--msg_id', id, '--add', 'mix'])).code).toBe(0);

    expect(await rq(['tagged', '--tag', 'mix'])).toEqual({ code: 0, out: ['ok 4', `${b2} que`, `${a2} que`, `${b1} que`, `${a1} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'mix', '--offset', '1', '--limit', '2'])).toEqual({ code: 0, out: ['ok 4', `${a2} que`, `${b1} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'mix', '--queue', 'beta'])).toEqual({ code: 0, out: ['ok 2', `${b2} que`, `${b1} que`], err: [] });
    // Re-tagging an older message does not move it (re-adding is a no-op); removing and adding again does.
    expect((await rq(['tag', '--msg_id', a1, '--add', 'mix'])).out).toEqual(['ok mix']);
    expect((await rq(['tag', '--msg_id', a1, '--remove', 'mix'])).out).toEqual(['ok none']);
    expect((await rq(['tag', '--msg_id', a1, '--add', 'mix'])).out).toEqual(['ok mix']);
    expect((await rq(['tagged', '--tag', 'mix', '--limit', '2'])).out).toEqual(['ok 4', `${a1} que`, `${b2} que`]);

    const j = await rq(['tagged', '--tag', 'mix', '--json', '--limit', '3']);
    expect(j.code).toBe(0);
    const merged = JSON.parse(j.out[0]);
    expect(merged.total).toBe(4);
    expect(merged.messages.map((m: { queue: string; msg_id: string }) => `${m.queue}/${m.msg_id}`)).toEqual([a1, b2, a2].map((id) => `${id.split('/').at(-2)}/${shortId(id)}`));
  });

  it('tracked lists the tracked messages of every queue, newest first, with their live state', async () => {
    const inAlpha = await waiting('alpha');
    const inBeta = await send('beta', '--param1', 'done');
    await beta.waitState(shortId(inBeta), ['done']);
    expect((await rq(['track', '--msg_id', inBeta])).code).toBe(0);
    expect((await rq(['track', '--msg_id', inAlpha])).code).toBe(0);
    expect(await rq(['tracked'])).toEqual({ code: 0, out: ['ok 2', `${inAlpha} que`, `${inBeta} done`], err: [] });
    expect(await rq(['tracked', '--state', 'done'])).toEqual({ code: 0, out: ['ok 1', `${inBeta} done`], err: [] });
    expect((await rq(['untrack', '--msg_id', inAlpha])).code).toBe(0);
    expect(await rq(['tracked'])).toEqual({ code: 0, out: ['ok 1', `${inBeta} done`], err: [] });
  });
});

describe('rq cancel --tag (rq-beyond §B5)', () => {
  it('cancels every prep, que and running message with the tag in every queue, and prints the sum', async () => {
    const pidFile = path.join(t.root, 'batch.pid');
    const running = await send('beta', '--param1', 'forever', '--param2', pidFile, '--tags', 'batch');
    const pid = await pidInFile(pidFile);
    groups.push(pid);
    const queued = [await waiting('alpha', '--tags', 'batch'), await waiting('alpha', '--tags', 'batch,keep'), await waiting('beta', '--tags', 'batch')];
    const finished = await send('alpha', '--param1', 'done', '--tags', 'batch');
    await alpha.waitState(shortId(finished), ['done']);
    const untagged = await waiting('alpha');

    expect(await rq(['cancel', '--tag', 'batch', '--reason', 'bad batch'], AS_ALICE)).toEqual({ code: 0, out: ['ok 4 cancelled'], err: [] });
    for (const id of queued) expect(await message(id)).toMatchObject({ state: 'err', outcome: 'cancelled', cancel: { by: 'cli:alice', reason: 'bad batch' } });
    expect(await beta.waitState(shortId(running), ['err'])).toMatchObject({ outcome: 'cancelled' });
    await waitFor(async () => (await groupMembers(pid)).length === 0, `group ${pid} to be gone`);
    expect(await alpha.state(shortId(finished))).toBe('done');
    expect(await alpha.state(shortId(untagged))).toBe('que');
    expect(await rq(['cancel', '--tag', 'batch'])).toEqual({ code: 0, out: ['ok 0 cancelled'], err: [] });
  });

  it('with --queue cancels in that queue only', async () => {
    const [a, b] = [await waiting('alpha', '--tags', 'only'), await waiting('beta', '--tags', 'only')];
    expect(await rq(['cancel', '--tag', 'only', '--queue', 'beta'])).toEqual({ code: 0, out: ['ok 1 cancelled'], err: [] });
    expect(await alpha.state(shortId(a))).toBe('que');
    expect(await beta.state(shortId(b))).toBe('err');
  });
});

describe('bad input (rq-beyond §B1.12): one line, exit 1, nothing sent or changed', () => {
  it('refuses malformed and missing tags, options that do not go together, and unknown queues', async () => {
    const id = await waiting('alpha', '--tags', 'stay');
    const before = (await alpha.cmd('num_messages')) as Record<string, number>;

    expectOneLineError(await rq(['sendmesg', '--dest', 'alpha', '--tags', 'ok,a b']), new RegExp(`^rq: --tags\\[1\\]: expected ${TAG_TEXT}, received "a b"$`), 2);
    expectOneLineError(await rq(['sendmesg', '--dest', 'alpha', '--tags']), /^rq: --tags: expected a value \(--tags a,b or --tags=a,b\), received no value$/, 2);
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
    expectOneLineError(await rq(['tagged', '--tag', 'stay', '--state', 'finished']), /^rq: --state: expected one of prep, que, run, done, relayed, err, received "finished"$/, 2);
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
    expectOneLineError(await rq(['cancel', '--tag', 'stay', '--reason', 'x'.repeat(1001)]), /^rq: --reason: expected text of at most 1000 characters without NUL, received 1001 characters$/, 2);

    expect(await alpha.cmd('num_messages')).toEqual(before);
    expect(await message(id)).toMatchObject({ state: 'que', tags: ['stay'] });
  });

  it('a queue that does not answer is named on stderr; the others still list and cancel, and the status is fail', async () => {
    const id = await waiting('alpha', '--tags', 'partial');
    await addQueue(t.root, 'dead'); // a queue directory whose process is not running
    try {
      const listed = await rq(['tagged', '--tag', 'partial']);
      expect(listed.code).toBe(1);
      expect(listed.out).toEqual(['fail 1', `${id} que`]);
      expect(listed.err).toEqual([expect.stringMatching(/^rq: queue dead: its process does not answer \(.*ENOENT.*\)$/)]);

      const cancelled = await rq(['cancel', '--tag', 'partial']);
      expect(cancelled).toEqual({ code: 1, out: ['fail 1 cancelled'], err: [expect.stringMatching(/^rq: queue dead: its process does not answer/)] });
      expect(await alpha.state(shortId(id))).toBe('err');
    } finally {
      await fs.rm(path.join(t.root, 'queues', 'dead'), { recursive: true, force: true });
    }
  });
});

describe('rq-mgr reindex (rq-beyond §B9.3)', () => {
  it('rebuilds a queue\'s tag index from its messages: an index entry no msg backs is gone, and it prints the pairs', async () => {
    const id = await waiting('counts', '--tags', 'real');
    await counts.stop();
    // The index is derived data: one line that no msg backs (a hand edit, a restored backup) over-counts.
    await fs.appendFile(counts.paths.tagsFile, `${JSON.stringify({ id: shortId(id), add: ['ghost'], at: Date.now() })}\n`);
    counts = await QueueProc.start(t.root, 'counts');
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
