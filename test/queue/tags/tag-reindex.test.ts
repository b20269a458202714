// The tag index kept by an in-process queue (rq-beyond §B9): relayed, acknowledged and deleted messages in it,
// the pairs reindex_tags counts, and its repair at start.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cmd, endRun, inProcessQueues } from '../in-process-session.js';
import { finished, ids, journal, journalLines, waiting } from './tag-session.js';
import { openFilesUnder } from '../../helpers/open-files.js';

const queue = inProcessQueues({ num_workers: 2 });

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
    expect((await cmd(q, 'tagged', { tag: 't', state: 'relayed' }))[1]).toEqual({
      total: 1,
      messages: [expect.objectContaining({ msg_id: r, state: 'relayed' })],
    });
    expect((await cmd(q, 'tagged', { tag: 't', state: 'relayed', offset: 1 }))[1]).toEqual({ total: 1, messages: [] });
    await fs.writeFile(journal(q), '');
    expect(await cmd(q, 'reindex_tags')).toEqual(['ok', 2]);
    expect(ids((await cmd(q, 'tagged', { tag: 't' }))[1])).toEqual([r, d]);
  });
});

describe('an acknowledged err message and a deleted one', () => {
  it('an acknowledged err message is found by its dotted name: listed, re-tagged, found again by a rebuild', async () => {
    const q = await queue();
    q.clock.ms += 1000;
    const id = (await q.send({ tags: ['t'] })).msg_id;
    await endRun(q, 0, id, 'err broken');
    await q.queue.ops.ackErrs();
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({
      total: 1,
      messages: [expect.objectContaining({ msg_id: id, state: 'err', status: 'err - broken' })],
    });
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
    const q1 = await queue({});
    const a = (await q1.queue.ops.create({ dest: 'q', due: Math.floor(q1.clock.ms / 1000) + 3600, tags: ['x', 'y'] } as never, true)).msg_id;
    q1.clock.ms += 1000;
    const b = (await q1.queue.ops.create({ dest: 'q', due: Math.floor(q1.clock.ms / 1000) + 3600, tags: ['x'] } as never, true)).msg_id;
    await q1.stop();
    // Only b's line and half of a's survive.
    await fs.writeFile(journal(q1), `${JSON.stringify({ id: a, add: ['y'], at: 1 })}\n${JSON.stringify({ id: b, add: ['x'], at: 2 })}\n`);
    const q2 = await queue({}, { root: q1.root });
    expect((await cmd(q2, 'tags'))[1]).toEqual({ x: 2, y: 1 });
    expect(ids((await cmd(q2, 'tagged', { tag: 'x' }))[1])).toEqual([a, b]);
    const lines = (await journalLines(q2)).map(({ at: _at, ...l }) => l);
    expect(lines.slice(2)).toEqual([{ id: a, add: ['x'] }]);
  });

  it('leaves out a message whose msg is gone from its directory (the cleaner halfway through it): no listing or rebuild fails', async () => {
    const q = await queue();
    const halfGone = await finished(q, 0, { tags: ['t'] });
    const kept = await finished(q, 1, { tags: ['t'] });
    await fs.rm(path.join((await q.queue.ops.locate(halfGone))!.dir, 'msg'));
    expect((await cmd(q, 'tagged', { tag: 't' }))[1]).toEqual({ total: 1, messages: [expect.objectContaining({ msg_id: kept })] });
    expect(await cmd(q, 'reindex_tags')).toEqual(['ok', 1]);
    expect(ids((await cmd(q, 'tagged', { tag: 't' }))[1])).toEqual([kept]);
  });

  it('a stopped queue lets go of its journal', async () => {
    const q = await queue();
    await waiting(q, { tags: ['t'] });
    await q.stop();
    expect(openFilesUnder(journal(q))).toEqual([]);
  });
});
