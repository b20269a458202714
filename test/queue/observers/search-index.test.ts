// The search index's contents: what it keeps of a message, long values checked against the message, fields re-read
// at err, finish times read from disk or seen, relayed messages (its upkeep by events: search-index-events.test.ts).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { searchable } from '../../../src/queue/observers/search-index.js';
import { cmd, endRun, inProcessQueues } from '../in-process-session.js';
import { ask, ids, later } from './search-session.js';

const queue = inProcessQueues();

describe('search index contents', () => {
  it('keeps top-level texts and numbers, lists of texts joined by commas; cuts at 256 and marks what it cut and what was a number', () => {
    const msg = {
      msg_id: 'm',
      dest: 'q',
      tags: ['a', 'b'],
      depends: [{ ref: 'x' }],
      mixed: ['a', 1],
      obj: { a: 'b' },
      flag: true,
      nul: null,
      _hidden: 'secret',
      count: 3,
      long: 'z'.repeat(257),
      edge: 'e'.repeat(256),
    };
    const s = searchable(msg as never);
    expect(s.fields).toEqual({ msg_id: 'm', dest: 'q', tags: 'a,b', count: '3', long: 'z'.repeat(256), edge: 'e'.repeat(256) });
    expect([...(s.cut ?? [])]).toEqual(['long']);
    expect([...(s.nums ?? [])]).toEqual(['count']);
    expect(searchable({ msg_id: 'm' } as never)).toEqual({ fields: { msg_id: 'm' } });
  });

  it('finds a value of exactly 256 characters by exact match, and tags by their joined text', async () => {
    const q = await queue();
    const edge = 'e'.repeat(255) + 'f';
    const a = (await q.queue.ops.create({ dest: 'q', param1: edge, tags: ['red', 'blue'] } as never, false)).msg_id;
    expect(ids(await ask(q, { query: { param1: edge }, exact: true }))).toEqual([a]);
    expect(ids(await ask(q, { query: { tags: 'red,blue' }, exact: true }))).toEqual([a]);
    expect(ids(await ask(q, { query: { tags: 'd,b' } }))).toEqual([a]);
  });

  it("finds a tag of a long tag list (cut in the index) by the message's tags joined by commas", async () => {
    const q = await queue();
    const tags = Array.from({ length: 10 }, (_, i) => `${'t'.repeat(40)}${i}`);
    const a = (await q.queue.ops.create({ dest: 'q', param1: 'x', tags } as never, false)).msg_id;
    expect(ids(await ask(q, { query: { tags: `${tags[8]},${tags[9]}` } }))).toEqual([a]);
    expect(ids(await ask(q, { query: { tags: tags.join(',') }, exact: true }))).toEqual([a]);
    expect(ids(await ask(q, { query: { tags: `${tags[8]}${tags[9]}` } }))).toEqual([]);
  });

  it('a long value: exact and contains are checked against the message, every field of the query; a field the message lacks matches nothing', async () => {
    const q = await queue();
    const long = `${'x'.repeat(300)}needle`;
    const a = (await q.queue.ops.create({ dest: 'q', param1: long, param2: 'p' } as never, false)).msg_id;
    expect(ids(await ask(q, { query: { param1: 'needle', param2: 'p' } }))).toEqual([a]);
    expect(ids(await ask(q, { query: { param1: 'needle', param2: 'q' } }))).toEqual([]);
    expect(ids(await ask(q, { query: { param1: 'needlx' } }))).toEqual([]);
    expect(ids(await ask(q, { query: { param1: `${long}x` }, exact: true }))).toEqual([]);
    expect(ids(await ask(q, { query: { param1: long.slice(0, 280) }, exact: true }))).toEqual([]);
    expect(ids(await ask(q, { query: { param1: long.slice(0, 280) } }))).toEqual([a]);
    // The message on disk lost the field behind the index's back: no match.
    const file = path.join(q.root, 'queues', 'q', 'prep', a, 'msg');
    const msg = JSON.parse(await fs.readFile(file, 'utf8'));
    delete msg.param1;
    await fs.writeFile(file, JSON.stringify(msg));
    expect(ids(await ask(q, { query: { param1: 'needle' } }))).toEqual([]);
    // Not as a text either: an absent or null value is no "undefined" nor "null".
    expect(ids(await ask(q, { query: { param1: 'undefined' } }))).toEqual([]);
    await fs.writeFile(file, JSON.stringify({ ...msg, param1: null }));
    expect(ids(await ask(q, { query: { param1: 'null' } }))).toEqual([]);
    await fs.rm(path.join(q.root, 'queues', 'q', 'prep', a), { recursive: true });
    expect(ids(await ask(q, { query: { param1: 'needle' } }))).toEqual([]);
  });

  it('checks a long value of an acknowledged error against its message under its dotted name', async () => {
    const q = await queue();
    const long = `${'x'.repeat(300)}needle`;
    const a = (await q.send({ param1: long })).msg_id;
    await endRun(q, 0, a, 'err broken');
    await q.queue.ops.ackErrs();
    expect((await ask(q, { query: { param1: 'needle' } }))[1].messages).toEqual([expect.objectContaining({ msg_id: a, acked: true })]);
  });

  it('checks every long field of the query against the message', async () => {
    const q = await queue();
    const a = (await q.queue.ops.create({ dest: 'q', param1: `${'x'.repeat(300)}needle`, param2: `${'y'.repeat(300)}pin` } as never, false)).msg_id;
    expect(ids(await ask(q, { query: { param1: 'needle', param2: 'pin' } }))).toEqual([a]);
    expect(ids(await ask(q, { query: { param1: 'needle', param2: 'nail' } }))).toEqual([]);
    expect(ids(await ask(q, { query: { param1: 'thread', param2: 'pin' } }))).toEqual([]);
  });

  it('reads a message that finished in err again: fields its finish set are found', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a' })).msg_id;
    const s = await q.launcher.nth(0);
    expect((await ask(q, {}))[1].total).toBe(1);
    expect(await cmd(q, 'cancel_message', { msg_id: a, reason: 'enough' })).toEqual(['ok', 'msg cancelling']);
    const finished = q.next('finished', ({ msg }) => msg.msg_id === a);
    await finished;
    expect(s.signals.length).toBeGreaterThan(0);
    expect((await ask(q, { query: { outcome: 'cancelled' } }))[1].messages).toEqual([
      { msg_id: a, state: 'err', fields: expect.objectContaining({ param1: 'a', outcome: 'cancelled' }) },
    ]);
  });

  it('sorts messages finished before this process by their status file (or their directory without one), acknowledged ones too', async () => {
    const q1 = await queue();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      q1.clock.ms += 1000;
      const m = (await q1.send({ param1: `m${i}` })).msg_id;
      await endRun(q1, i, m, i >= 3 ? 'err broken' : 'done fine');
      made.push(m);
      if (i === 3) await q1.queue.ops.ackErrs();
    }
    await q1.stop();
    const q = await queue({}, { root: q1.root });
    // Finished in the order 1, 0, 2 as their status files say.
    const dir = async (id: string) => (await q.queue.ops.locate(id))!.dir;
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    await fs.utimes(path.join(await dir(made[1]), 'status'), at(1), at(1));
    await fs.utimes(path.join(await dir(made[0]), 'status'), at(2), at(2));
    await fs.utimes(path.join(await dir(made[2]), 'status'), at(3), at(3));
    // 3 is acknowledged (err/.<id>), the oldest; 4 has no status file, its directory says when.
    const acked = path.join(q.root, 'queues', 'q', 'err', `.${made[3]}`);
    await fs.utimes(path.join(acked, 'status'), at(0), at(0));
    await fs.rm(path.join(await dir(made[4]), 'status'));
    await fs.utimes(await dir(made[4]), at(4), at(4));
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual([made[3], made[1], made[0], made[2], made[4]]);
    expect(ids(await ask(q, { sort: 'finished', order: 'desc' }))).toEqual([made[4], made[2], made[0], made[1], made[3]]);
    // Read at start from its dotted name: acknowledged.
    expect(ids(await ask(q, { acked: true }))).toEqual([made[3]]);
  });

  it('sorts messages it saw finish by the time it saw, not by their status files', async () => {
    const q = await queue();
    expect((await ask(q, {}))[1].total).toBe(0);
    const made: string[] = [];
    for (let i = 0; i < 2; i++) {
      q.clock.ms += 1000;
      const m = (await q.send({ param1: `m${i}` })).msg_id;
      await endRun(q, i, m, 'done fine');
      made.push(m);
    }
    // The files say the opposite order.
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    await fs.utimes(path.join((await q.queue.ops.locate(made[0]))!.dir, 'status'), at(2), at(2));
    await fs.utimes(path.join((await q.queue.ops.locate(made[1]))!.dir, 'status'), at(1), at(1));
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual(made);
  });

  it('a relayed message is finished: its finish time in detail, sorted among finished ones, read at start', async () => {
    const q = await queue();
    expect((await ask(q, {}))[1].total).toBe(0);
    const r = (await q.send({ param1: 'r' })).msg_id;
    await endRun(q, 0, r, 'relayed', 1000);
    q.clock.ms += 1000;
    const w = (await q.send({ param1: 'w', due: later(q) })).msg_id;
    const row = (await ask(q, { detail: true, state: 'relayed' }))[1].messages;
    expect(row).toEqual([expect.objectContaining({ msg_id: r, state: 'relayed', ms: 1000, finished: expect.any(Number) })]);
    expect(row[0].finished).toBeGreaterThan(0);
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual([r, w]);
    await q.stop();
    const q2 = await queue({}, { root: q.root });
    expect(ids(await ask(q2, { state: 'relayed' }))).toEqual([r]);
    expect(ids(await ask(q2, { sort: 'finished', order: 'asc' }))).toEqual([r, w]);
  });
});
