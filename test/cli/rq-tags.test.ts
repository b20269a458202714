// rq's tag commands against real queue processes (rq-beyond §B9, §B1.10): sendmesg --tags, tag,
// track/untrack, and tags, tagged and tracked (one queue, and every queue merged).
import { describe, expect, it } from 'vitest';
import { runRq } from '../helpers/rq-cli.js';
import { AS_ALICE, shortId, tagRoot } from './rq-tags-harness.js';

const s = tagRoot();
const { rq, send, waiting, tagsOf } = s;

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
    const history = (await s.alpha.cmd('get_history', { msg_id: shortId(id) }))[1];
    expect(history.at(-1)).toMatchObject({ event: 'tags', actor: 'cli:alice', add: ['green'], remove: ['blue'] });

    expect(await rq(['track', '--msg_id', `alpha/${shortId(id)}`])).toEqual({ code: 0, out: ['ok red,green,track'], err: [] });
    expect(await rq(['untrack', '--msg_id', id])).toEqual({ code: 0, out: ['ok red,green'], err: [] });
    expect(await rq(['tag', '--msg_id', id, '--remove', 'red,green'])).toEqual({ code: 0, out: ['ok none'], err: [] });
    expect(await tagsOf(id)).toBeUndefined();

    // Any state: a finished message (in a hash dir) is tagged too.
    const done = await send('alpha', '--param1', 'done');
    await s.alpha.waitState(shortId(done), ['done']);
    expect(await rq(['track', '--msg_id', done])).toEqual({ code: 0, out: ['ok track'], err: [] });
    expect(await tagsOf(done)).toEqual(['track']);
    expect(await rq(['untrack', '--msg_id', done])).toEqual({ code: 0, out: ['ok none'], err: [] });
  });

  it("prints the queue's refusal for an unknown message, on stdout, exit 1", async () => {
    expect(await rq(['tag', '--msg_id', 'alpha/20200101.0000.00.000.1', '--add', 'x'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    expect(await rq(['track', '--msg_id', 'beta/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });
});

describe('rq tags and tagged of one queue (rq-beyond §B9.2)', () => {
  it('tags counts per tag, most used first then by name; tagged lists full ids newest tagging first, by state, by page', async () => {
    const [m1, m2, m3] = [
      await waiting('counts', '--tags', 'zeta,beta'),
      await waiting('counts', '--tags', 'alpha,zeta'),
      await waiting('counts', '--tags', 'beta,alpha'),
    ];
    const finished = await send('counts', '--param1', 'done', '--tags', 'zeta');
    await s.counts.waitState(shortId(finished), ['done']);

    expect(await rq(['tags', '--queue', 'counts'])).toEqual({ code: 0, out: ['ok 3', 'zeta 3', 'alpha 2', 'beta 2'], err: [] });
    // The queue as a word, as rq ls and rq stats take it; the tag of tagged likewise.
    expect(await rq(['tags', 'counts'])).toEqual({ code: 0, out: ['ok 3', 'zeta 3', 'alpha 2', 'beta 2'], err: [] });
    expect(await rq(['tagged', 'zeta', '--queue', 'counts'])).toEqual(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts']));
    const j = await rq(['tags', '--queue', 'counts', '--json']);
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out[0])).toEqual({ zeta: 3, alpha: 2, beta: 2 });

    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts'])).toEqual({
      code: 0,
      out: ['ok 3', `${finished} done`, `${m2} que`, `${m1} que`],
      err: [],
    });
    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts', '--state', 'que'])).toEqual({ code: 0, out: ['ok 2', `${m2} que`, `${m1} que`], err: [] });
    expect(await rq(['tagged', '--tag', 'zeta', '--queue', 'counts', '--offset', '1', '--limit', '1'])).toEqual({
      code: 0,
      out: ['ok 3', `${m2} que`],
      err: [],
    });
    expect(await rq(['tagged', '--tag', 'nobody', '--queue', 'counts'])).toEqual({ code: 0, out: ['ok 0'], err: [] });

    const tj = await rq(['tagged', '--tag', 'alpha', '--queue', 'counts', '--json']);
    expect(tj.code).toBe(0);
    const listing = JSON.parse(tj.out[0]);
    expect(listing).toMatchObject({ total: 2, gone: [] });
    expect(listing.messages.map((m: { queue: string; msg_id: string; state: string }) => [m.queue, m.msg_id, m.state])).toEqual([
      ['counts', shortId(m3), 'que'],
      ['counts', shortId(m2), 'que'],
    ]);
    expect(listing.messages[0]).toEqual(
      expect.objectContaining({ status: expect.any(String), due: expect.any(Number), priority: 0, tagged_at: expect.any(String) }),
    );
  });
});

describe('rq tagged and tracked over every queue (rq-beyond §B9.2, §B9.4)', () => {
  it("merges the queues' pages, most recently tagged first, across queues; --offset and --limit apply to the merge", async () => {
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
    expect(merged.messages.map((m: { queue: string; msg_id: string }) => `${m.queue}/${m.msg_id}`)).toEqual(
      [a1, b2, a2].map((id) => `${id.split('/').at(-2)}/${shortId(id)}`),
    );
  });

  it('tracked lists the tracked messages of every queue, newest first, with their live state', async () => {
    const inAlpha = await waiting('alpha');
    const inBeta = await send('beta', '--param1', 'done');
    await s.beta.waitState(shortId(inBeta), ['done']);
    expect((await rq(['track', '--msg_id', inBeta])).code).toBe(0);
    expect((await rq(['track', '--msg_id', inAlpha])).code).toBe(0);
    expect(await rq(['tracked'])).toEqual({ code: 0, out: ['ok 2', `${inAlpha} que`, `${inBeta} done`], err: [] });
    expect(await rq(['tracked', '--state', 'done'])).toEqual({ code: 0, out: ['ok 1', `${inBeta} done`], err: [] });
    expect((await rq(['untrack', '--msg_id', inAlpha])).code).toBe(0);
    expect(await rq(['tracked'])).toEqual({ code: 0, out: ['ok 1', `${inBeta} done`], err: [] });
  });
});
