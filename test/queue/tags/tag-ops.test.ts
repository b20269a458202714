// Tag operations on an in-process queue (rq-beyond §B9): what tag_message writes and journals, the tagged page's
// fields, filters and totals, and cancel_tagged's choice.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { InProcess } from '../in-process.js';
import { cmd, endRun, inProcessQueues } from '../in-process-session.js';
import { finished, ids, journalLines, waiting } from './tag-session.js';

const queue = inProcessQueues({ num_workers: 2 });

const tagsLines = async (q: InProcess, id: string) => (await cmd(q, 'get_history', { msg_id: id }))[1].filter((h: { event?: string }) => h.event === 'tags');

describe('tag_message', () => {
  it('journals and writes exactly the change: a tag both added and removed is neither; history names only what changed', async () => {
    const q = await queue();
    const id = await waiting(q, { tags: ['a', 'b'] });
    // x is not on the message: adding and removing it at once does nothing at all.
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'x', remove: 'x' })).toEqual(['ok', ['a', 'b']]);
    expect(await tagsLines(q, id)).toEqual([]);
    // b is: removed (remove wins), and the added c goes last.
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'b,c', remove: 'b', actor: 'me' })).toEqual(['ok', ['a', 'c']]);
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'd' })).toEqual(['ok', ['a', 'c', 'd']]);
    expect(await cmd(q, 'tag_message', { msg_id: id, remove: 'a,zz' })).toEqual(['ok', ['c', 'd']]);
    const lines = (await tagsLines(q, id)).map(({ at: _at, ...l }: { at: string }) => l);
    expect(lines).toEqual([
      { event: 'tags', actor: 'me', add: ['c'], remove: ['b'] },
      { event: 'tags', actor: 'socket', add: ['d'] },
      { event: 'tags', actor: 'socket', remove: ['a'] },
    ]);
    const msg = JSON.parse(await fs.readFile(path.join(q.root, 'queues', 'q', 'que', id, 'msg'), 'utf8'));
    expect(msg.tags).toEqual(['c', 'd']);
    // The journal: the create's line, then per change its added tags before and its removed tags after.
    const mine = (await journalLines(q)).filter((l) => l.id === id).map(({ at: _at, ...l }) => l);
    expect(mine).toEqual([
      { id, add: ['a', 'b'] },
      { id, add: ['c'] },
      { id, remove: ['b'] },
      { id, add: ['d'] },
      { id, remove: ['a'] },
    ]);
    expect((await cmd(q, 'tags'))[1]).toEqual({ c: 1, d: 1 });
  });

  it('allows exactly 32 tags and refuses a 33rd, changing nothing', async () => {
    const q = await queue();
    const id = await waiting(q, { tags: Array.from({ length: 31 }, (_, i) => `t${i}`) });
    expect((await cmd(q, 'tag_message', { msg_id: id, add: 't31' }))[1]).toHaveLength(32);
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 't32' })).toEqual(['fail', 'tags: expected at most 32 tags, received 33']);
    // One out, one in: 32 again, allowed.
    expect((await cmd(q, 'tag_message', { msg_id: id, add: 't32', remove: 't0' }))[1]).toHaveLength(32);
    expect((await cmd(q, 'get_message', { msg_id: id }))[1].tags).toContain('t32');
  });

  it('removing the last tag leaves the message without a tags field, in memory and on disk', async () => {
    const q = await queue();
    const id = await waiting(q, { tags: ['only'] });
    expect(await cmd(q, 'tag_message', { msg_id: id, remove: 'only' })).toEqual(['ok', []]);
    const msg = JSON.parse(await fs.readFile(path.join(q.root, 'queues', 'q', 'que', id, 'msg'), 'utf8'));
    expect('tags' in msg).toBe(false);
    expect('tags' in q.queue.index.liveMessage(id)!).toBe(false);
    expect((await cmd(q, 'tags'))[1]).toEqual({});
  });

  it('memory follows: a queued message tagged then run keeps the tags in done; a tagged prep message keeps them when committed', async () => {
    const q = await queue();
    const id = await waiting(q);
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'kept' })).toEqual(['ok', ['kept']]);
    expect(q.queue.index.liveMessage(id)!.tags).toEqual(['kept']);
    await cmd(q, 'tag_message', { msg_id: id, add: 'gone-again' });
    await cmd(q, 'tag_message', { msg_id: id, remove: 'kept,gone-again' });
    expect(q.queue.index.liveMessage(id)!.tags).toBeUndefined();
    await cmd(q, 'tag_message', { msg_id: id, add: 'kept' });
    // Run it now: the run and its finish write the message from memory.
    const done = q.next('finished', ({ msg }) => msg.msg_id === id);
    expect(await cmd(q, 'run_message', { msg_id: id })).toEqual(['ok', expect.anything()]);
    const s = await q.launcher.nth(0);
    s.say('done fine');
    s.exit(0);
    await done;
    expect((await cmd(q, 'get_message', { msg_id: id }))[1]).toMatchObject({ status: 'done - fine', tags: ['kept'] });

    const prep = (await q.queue.ops.create({ dest: 'q', param1: 'p', tags: ['one'] } as never, false)).msg_id;
    expect(await cmd(q, 'tag_message', { msg_id: prep, add: 'two' })).toEqual(['ok', ['one', 'two']]);
    await q.queue.ops.commit(prep);
    expect((await cmd(q, 'get_message', { msg_id: prep }))[1].tags).toEqual(['one', 'two']);
  });

  it('retries a write that found the message moved (ENOENT), at most three times', async () => {
    const q = await queue();
    const id = await waiting(q, { tags: ['a'] });
    const spool = q.queue.spool as unknown as { writeMessage: (...a: unknown[]) => Promise<void> };
    const real = spool.writeMessage.bind(spool);
    let fails = 2;
    spool.writeMessage = async (...a: unknown[]) => {
      if (fails-- > 0) throw Object.assign(new Error('moved'), { code: 'ENOENT' });
      return real(...a);
    };
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'b' })).toEqual(['ok', ['a', 'b']]);
    fails = 3;
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'c' })).toEqual(['fail', 'internal error: moved']);
    fails = 1;
    spool.writeMessage = async (...a: unknown[]) => {
      if (fails-- > 0) throw Object.assign(new Error('full'), { code: 'ENOSPC' });
      return real(...a);
    };
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'd' })).toEqual(['fail', 'internal error: full']);
    spool.writeMessage = real;
    expect((await cmd(q, 'get_message', { msg_id: id }))[1].tags).toEqual(['a', 'b']);
  });
});

describe('tagged', () => {
  it('gives each entry its state, status, due, priority and tagging time', async () => {
    const q = await queue();
    const due = Math.floor(q.clock.ms / 1000) + 7200;
    const id = (await q.send({ due, priority: 7, tags: ['t'] })).msg_id;
    const taggedAt = q.clock.ms;
    q.clock.ms += 5000;
    const page = (await cmd(q, 'tagged', { tag: 't' }))[1];
    expect(page).toEqual({
      total: 1,
      messages: [{ msg_id: id, state: 'que', status: expect.stringMatching(/^que/), due, priority: 7, tagged_at: new Date(taggedAt).toISOString() }],
    });
    const plain = (await q.send({ due, tags: ['u'] })).msg_id;
    expect((await cmd(q, 'tagged', { tag: 'u' }))[1].messages[0]).toMatchObject({ msg_id: plain, priority: 0, due });
  });

  it('filters by state with offset and limit over the matches; total counts the matches of that state', async () => {
    const q = await queue();
    const done = [await finished(q, 0, { tags: ['t'] }), await finished(q, 1, { tags: ['t'] })];
    const que = [await waiting(q, { tags: ['t'] }), await waiting(q, { tags: ['t'] }), await waiting(q, { tags: ['t'] })];
    const all = (await cmd(q, 'tagged', { tag: 't' }))[1];
    expect(all.total).toBe(5);
    expect(ids(all)).toEqual([...que].reverse().concat([...done].reverse()));
    expect((await cmd(q, 'tagged', { tag: 't', state: 'que', offset: 1, limit: 1 }))[1]).toMatchObject({ total: 3, messages: [{ msg_id: que[1] }] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done', offset: 1 }))[1]).toMatchObject({ total: 2, messages: [{ msg_id: done[0], state: 'done' }] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done', limit: 1 }))[1]).toMatchObject({ total: 2, messages: [{ msg_id: done[1] }] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err' }))[1]).toEqual({ total: 0, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'prep' }))[1]).toEqual({ total: 0, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'run' }))[1]).toEqual({ total: 0, messages: [] });
    // Without a state, offset skips the newest and total stays the index's count.
    expect((await cmd(q, 'tagged', { tag: 't', offset: 2, limit: 2 }))[1]).toEqual({
      total: 5,
      messages: [expect.objectContaining({ msg_id: que[0] }), expect.objectContaining({ msg_id: done[1] })],
    });
    expect((await cmd(q, 'tagged', { tag: 't', offset: 5 }))[1]).toEqual({ total: 5, messages: [] });
  });

  it('drops an entry whose message lost the tag behind the index, and reports one gone from disk, also before the page', async () => {
    const q = await queue();
    const lost = await waiting(q, { tags: ['t'] });
    const gone = await finished(q, 0, { tags: ['t'] });
    const kept = [await waiting(q, { tags: ['t'] }), await waiting(q, { tags: ['t'] })];
    // lost: the message in memory no longer has the tag (as a crash between journal and msg leaves it).
    delete q.queue.index.liveMessage(lost)!.tags;
    // gone: the cleaner removed a done message's directory.
    await fs.rm((await q.queue.ops.locate(gone))!.dir, { recursive: true });
    // Both lie past a page of one: only counted there, still dropped.
    expect((await cmd(q, 'tagged', { tag: 't', limit: 1 }))[1]).toEqual({ total: 4, messages: [expect.objectContaining({ msg_id: kept[1] })] });
    const page = (await cmd(q, 'tagged', { tag: 't', state: 'que', offset: 1 }))[1];
    // kept[1] counted before the page, kept[0] on it, lost dropped.
    expect(page).toEqual({ total: 2, messages: [expect.objectContaining({ msg_id: kept[0] })] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done' }))[1]).toEqual({ total: 0, messages: [], gone: [gone] });
    expect((await cmd(q, 'tags'))[1]).toEqual({ t: 2 });
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 2, messages: kept.reverse().map((msg_id) => expect.objectContaining({ msg_id })) });
    const lines = (await journalLines(q)).map(({ at: _at, ...l }) => l);
    expect(lines).toContainEqual({ id: lost, remove: ['t'] });
    expect(lines).toContainEqual({ id: gone, gone: true });
  });

  it('without a state, drops from the total an entry on the page whose message lost the tag', async () => {
    const q = await queue();
    const lost = await waiting(q, { tags: ['t'] });
    const kept = await waiting(q, { tags: ['t'] });
    delete q.queue.index.liveMessage(lost)!.tags;
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: kept })] });
    expect((await cmd(q, 'tags'))[1]).toEqual({ t: 1 });
  });

  it('counts a finished message before the page only in its own state', async () => {
    const q = await queue();
    await finished(q, 0, { tags: ['t'] });
    await finished(q, 1, { tags: ['t'] });
    q.clock.ms += 1000;
    const e = (await q.send({ tags: ['t'] })).msg_id;
    await endRun(q, 2, e, 'err broken');
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err', offset: 5 }))[1]).toEqual({ total: 1, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done', offset: 5 }))[1]).toEqual({ total: 2, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: e, state: 'err' })] });
  });

  it('reports a message gone from disk before the page too, and leaves it out of the total', async () => {
    const q = await queue();
    const a = await finished(q, 0, { tags: ['t'] });
    const b = await finished(q, 1, { tags: ['t'] });
    await fs.rm((await q.queue.ops.locate(b))!.dir, { recursive: true });
    expect((await cmd(q, 'tagged', { tag: 't', offset: 1 }))[1]).toEqual({ total: 1, messages: [], gone: [b] });
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: a })] });
    expect((await journalLines(q)).map(({ at: _at, ...l }) => l)).toContainEqual({ id: b, gone: true });
  });

  it('counts a finished message before the page by where it is on disk', async () => {
    const q = await queue();
    const a = await finished(q, 0, { tags: ['t'] });
    const b = await finished(q, 1, { tags: ['t'] });
    const c = await waiting(q, { tags: ['t'] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done', offset: 1 }))[1]).toEqual({ total: 2, messages: [expect.objectContaining({ msg_id: a })] });
    expect((await cmd(q, 'tagged', { tag: 't', offset: 1, limit: 1 }))[1]).toEqual({ total: 3, messages: [expect.objectContaining({ msg_id: b })] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'que', offset: 1 }))[1]).toEqual({ total: 1, messages: [] });
    expect(ids((await cmd(q, 'tagged', { tag: 't' }))[1])).toEqual([c, b, a]);
  });
});

describe('cancel_tagged', () => {
  it('cancels the live messages that carry the tag (prep ones read from disk), not finished ones nor ones that lost it', async () => {
    const q = await queue();
    const done = await finished(q, 0, { tags: ['t'] });
    const que = await waiting(q, { tags: ['t'] });
    const lost = await waiting(q, { tags: ['t'] });
    delete q.queue.index.liveMessage(lost)!.tags;
    const prep = (await q.queue.ops.create({ dest: 'q', param1: 'p', tags: ['t'] } as never, false)).msg_id;
    // After a restart memory holds only a prep message's id.
    q.queue.index.addPrep(prep, null);
    const other = await waiting(q, { tags: ['u'] });
    expect(await cmd(q, 'cancel_tagged', { tag: 't', reason: 'bulk' })).toEqual(['ok', 2]);
    expect(await q.state(que)).toBe('err');
    expect(await q.state(prep)).toBe('err');
    expect(await q.state(lost)).toBe('que');
    expect(await q.state(done)).toBe('done');
    expect(await q.state(other)).toBe('que');
    expect(await cmd(q, 'cancel_tagged', { tag: 't' })).toEqual(['ok', 0]);
  });

  it('counts only the cancels that succeeded, and names each that failed: never ok with a failure left unsaid', async () => {
    const q = await queue();
    const a = await waiting(q, { tags: ['t'] });
    const b = await waiting(q, { tags: ['t'] });
    const lifecycle = q.queue.lifecycle as unknown as { cancel: (id: string, ...rest: unknown[]) => Promise<unknown> };
    const real = lifecycle.cancel.bind(lifecycle);
    lifecycle.cancel = async (id: string, ...rest: unknown[]) => {
      if (id === a) throw new Error('refused');
      return real(id, ...rest);
    };
    expect(await cmd(q, 'cancel_tagged', { tag: 't' })).toEqual([
      'fail',
      `1 of 2 messages were not cancelled (${a}: refused)`,
      { total: 2, done: 1, failed: 1, failures: [{ id: a, reason: 'refused', code: 'RQ_ERR_INTERNAL' }] },
    ]);
    expect(await q.state(b)).toBe('err');
    expect(await q.state(a)).toBe('que');
  });

  it('passes over a prep message whose msg cannot be read, and names the disk in a cancel that failed on it', async () => {
    const q = await queue();
    const unreadable = (await q.queue.ops.create({ dest: 'q', param1: 'p', tags: ['t'] } as never, false)).msg_id;
    q.queue.index.addPrep(unreadable, null);
    await fs.rm(path.join((await q.queue.ops.locate(unreadable))!.dir, 'msg'));
    const full = await waiting(q, { tags: ['t'] });
    const lifecycle = q.queue.lifecycle as unknown as { cancel: (id: string, ...rest: unknown[]) => Promise<unknown> };
    lifecycle.cancel = async () => {
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    };
    expect((await cmd(q, 'cancel_tagged', { tag: 't' }))[2]).toEqual({
      total: 1,
      done: 0,
      failed: 1,
      failures: [{ id: full, reason: 'cancel message failed: no space left on device', code: 'RQ_ERR_DISK' }],
    });
  });
});
