// Tag operations on an in-process queue (rq-beyond §B9): what tag_message writes and journals, the tagged page's
// fields, filters and totals, cancel_tagged's choice, the pairs reindex_tags counts, and the index's repair at start.
import fs from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { handleRequest } from '../../src/queue/commands.js';
import { type InProcess, inProcessQueue } from './in-process.js';

const open: InProcess[] = [];
afterEach(async () => {
  for (const q of open.splice(0)) await q.close();
});

const cmd = async (q: InProcess, command: string, arg: unknown = {}) => JSON.parse(await handleRequest(q.queue, `${command} ${JSON.stringify(arg)}`, pino({ level: 'silent' })));
const journal = (q: InProcess) => path.join(q.root, 'queues', 'q', '.index', 'tags.jsonl');
const journalLines = async (q: InProcess) => (await fs.readFile(journal(q), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const ids = (page: { messages: { msg_id: string }[] }) => page.messages.map((m) => m.msg_id);

async function queue(): Promise<InProcess> {
  const q = await inProcessQueue({ num_workers: 2 });
  open.push(q);
  return q;
}

/** A message waiting in que an hour ahead (whole, in memory), one second after the last. */
async function waiting(q: InProcess, fields: Record<string, unknown> = {}): Promise<string> {
  q.clock.ms += 1000;
  return (await q.send({ due: Math.floor(q.clock.ms / 1000) + 3600, ...fields })).msg_id;
}

/** A message finished to done (through the fake launcher's script `n`). */
async function finished(q: InProcess, n: number, fields: Record<string, unknown> = {}): Promise<string> {
  q.clock.ms += 1000;
  const m = await q.send(fields);
  const s = await q.launcher.nth(n);
  const done = q.next('finished', ({ msg }) => msg.msg_id === m.msg_id);
  s.say('done fine');
  s.exit(0);
  await done;
  return m.msg_id;
}

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
    expect(mine).toEqual([{ id, add: ['a', 'b'] }, { id, add: ['c'] }, { id, remove: ['b'] }, { id, add: ['d'] }, { id, remove: ['a'] }]);
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
    expect(page).toEqual({ total: 1, messages: [{ msg_id: id, state: 'que', status: expect.stringMatching(/^que/), due, priority: 7, tagged_at: new Date(taggedAt).toISOString() }] });
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
    expect((await cmd(q, 'tagged', { tag: 't', offset: 2, limit: 2 }))[1]).toEqual({ total: 5, messages: [expect.objectContaining({ msg_id: que[0] }), expect.objectContaining({ msg_id: done[1] })] });
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
    const s = await q.launcher.nth(2);
    const f = q.next('finished', ({ msg }) => msg.msg_id === e);
    s.say('err broken');
    s.exit(0);
    await f;
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err', offset: 5 }))[1]).toEqual({ total: 1, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'done', offset: 5 }))[1]).toEqual({ total: 2, messages: [] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: e, state: 'err' })] });
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

describe('a relayed message', () => {
  it('is listed in its state, counted before the page, and found again by a rebuild', async () => {
    const q = await queue();
    const d = await finished(q, 0, { tags: ['t'] });
    q.clock.ms += 1000;
    const r = (await q.send({ tags: ['t'] })).msg_id;
    const s = await q.launcher.nth(1);
    const f = q.next('finished', ({ msg }) => msg.msg_id === r);
    s.say('relayed');
    s.exit(0);
    await f;
    expect(await q.state(r)).toBe('relayed');
    expect((await cmd(q, 'tagged', { tag: 't', state: 'relayed' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: r, state: 'relayed' })] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'relayed', offset: 1 }))[1]).toEqual({ total: 1, messages: [] });
    await fs.writeFile(journal(q), '');
    expect(await cmd(q, 'reindex_tags')).toEqual(['ok', 2]);
    expect(ids((await cmd(q, 'tagged', { tag: 't' }))[1])).toEqual([r, d]);
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

  it('counts only the cancels that succeeded', async () => {
    const q = await queue();
    const a = await waiting(q, { tags: ['t'] });
    const b = await waiting(q, { tags: ['t'] });
    const lifecycle = q.queue.lifecycle as unknown as { cancel: (id: string, ...rest: unknown[]) => Promise<unknown> };
    const real = lifecycle.cancel.bind(lifecycle);
    lifecycle.cancel = async (id: string, ...rest: unknown[]) => {
      if (id === a) throw new Error('refused');
      return real(id, ...rest);
    };
    expect(await cmd(q, 'cancel_tagged', { tag: 't' })).toEqual(['ok', 1]);
    expect(await q.state(b)).toBe('err');
  });
});

describe('an acknowledged err message and a deleted one', () => {
  it('an acknowledged err message is found by its dotted name: listed, re-tagged, found again by a rebuild', async () => {
    const q = await queue();
    q.clock.ms += 1000;
    const id = (await q.send({ tags: ['t'] })).msg_id;
    const s = await q.launcher.nth(0);
    const finished = q.next('finished', ({ msg }) => msg.msg_id === id);
    s.say('err broken');
    s.exit(0);
    await finished;
    await q.queue.ops.ackErrs();
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: id, state: 'err', status: 'err - broken' })] });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'err' }))[1]).toMatchObject({ total: 1, messages: [{ msg_id: id }] });
    expect(await cmd(q, 'tag_message', { msg_id: id, add: 'later' })).toEqual(['ok', ['t', 'later']]);
    const msg = JSON.parse(await fs.readFile(path.join(q.root, 'queues', 'q', 'err', `.${id}`, 'msg'), 'utf8'));
    expect(msg.tags).toEqual(['t', 'later']);
    expect(await cmd(q, 'reindex_tags')).toEqual(['ok', 2]);
    expect((await cmd(q, 'tagged', { tag: 'later' }))[1]).toMatchObject({ total: 1, messages: [{ msg_id: id, state: 'err' }] });
    expect(await cmd(q, 'tag_message', { msg_id: '20261121.1643.46.613.1', add: 'x' })).toEqual(['fail', 'msg not found']);
  });

  it('a deleted message leaves the index at once', async () => {
    const q = await queue();
    const a = await waiting(q, { tags: ['t', 'u'] });
    const b = await waiting(q, { tags: ['t'] });
    expect(await cmd(q, 'delete_message', { msg_id: a })).toEqual(['ok', 'msg deleted']);
    expect((await cmd(q, 'tags'))[1]).toEqual({ t: 1 });
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: b })] });
    await expect.poll(async () => (await journalLines(q)).some((l) => l.id === a && l.gone)).toBe(true);
  });
});

describe('the index', () => {
  it('reindex_tags counts the (tag, message) pairs and lists by creation, newest first, over every state', async () => {
    const q = await queue();
    const a = await finished(q, 0, { tags: ['t', 'u'] });
    const b = await waiting(q, { tags: ['t'] });
    const e = await finished(q, 1, { tags: ['t', 'v', 'w'] });
    const c = await waiting(q, { param1: 'untagged' });
    await cmd(q, 'tag_message', { msg_id: a, add: 'late' });
    // Tagging a finished message leaves it finished (nothing in memory claims it).
    expect(q.queue.index.liveState(a)).toBeNull();
    expect((await cmd(q, 'tagged', { tag: 'late', state: 'done' }))[1]).toMatchObject({ total: 1, messages: [{ msg_id: a, state: 'done' }] });
    await fs.writeFile(journal(q), '');
    expect(await cmd(q, 'reindex_tags')).toEqual(['ok', 7]);
    expect(ids((await cmd(q, 'tagged', { tag: 't' }))[1])).toEqual([e, b, a]);
    expect((await cmd(q, 'tags'))[1]).toEqual({ t: 3, late: 1, u: 1, v: 1, w: 1 });
    expect(c).toBeTruthy();
    // Rebuilt times are the ids' creation times.
    expect((await cmd(q, 'tagged', { tag: 'late' }))[1].messages[0].tagged_at).toBe(new Date(Date.UTC(2026, 10, 25, 12, 0, 1)).toISOString());
  });

  it('at start, adds the tags of live messages its journal lacks (a journal cut by hand)', async () => {
    const q1 = await inProcessQueue();
    const a = (await q1.queue.ops.create({ dest: 'q', due: Math.floor(q1.clock.ms / 1000) + 3600, tags: ['x', 'y'] } as never, true)).msg_id;
    q1.clock.ms += 1000;
    const b = (await q1.queue.ops.create({ dest: 'q', due: Math.floor(q1.clock.ms / 1000) + 3600, tags: ['x'] } as never, true)).msg_id;
    await q1.stop();
    // Only b's line and half of a's survive.
    await fs.writeFile(journal(q1), `${JSON.stringify({ id: a, add: ['y'], at: 1 })}\n${JSON.stringify({ id: b, add: ['x'], at: 2 })}\n`);
    const q2 = await inProcessQueue({}, { root: q1.root });
    open.push(q2);
    expect((await cmd(q2, 'tags'))[1]).toEqual({ x: 2, y: 1 });
    expect(ids((await cmd(q2, 'tagged', { tag: 'x' }))[1])).toEqual([a, b]);
    const lines = (await journalLines(q2)).map(({ at: _at, ...l }) => l);
    expect(lines.slice(2)).toEqual([{ id: a, add: ['x'] }]);
  });
});
