// Search of a queue's messages in every state (brightroll `/search`): contains and exact, all fields ANDed, moves followed, long values checked against the message, paged newest first.
import { afterEach, describe, expect, it } from 'vitest';
import { type InProcess, inProcessQueue } from '../in-process.js';
import { ask, ids, indexed } from './search-session.js';

const open: InProcess[] = [];
afterEach(async () => {
  for (const q of open.splice(0)) await q.close();
});

async function prepQueue(): Promise<InProcess> {
  const q = await inProcessQueue();
  open.push(q);
  return q;
}

describe('search', () => {
  it('answers as brightroll’s test_web_search: every message, contains, exact, an unknown field', async () => {
    const q = await prepQueue();
    for (const p of ['ear', 'hello:pear', 'search', 'html', 'html']) await q.queue.ops.create({ dest: 'q', src: 'test_search', param1: p } as never, false);
    expect((await ask(q, {}))[1].total).toBe(5);
    const contains = await ask(q, { query: { param1: 'ear' } });
    expect(contains[1].messages.map((m: { fields: { param1: string } }) => m.fields.param1).sort()).toEqual(['ear', 'hello:pear', 'search']);
    expect((await ask(q, { query: { param1: 'ear' }, exact: true }))[1].total).toBe(1);
    expect((await ask(q, { query: { fakestuff: 'asdfasdf' } }))[1].total).toBe(0);
    expect((await ask(q, { query: { param1: 'html', src: 'test_search' }, exact: '1' }))[1].total).toBe(2);
    expect((await ask(q, { query: { param1: 'html', src: 'nope' } }))[1].total).toBe(0);
    // The UI's box: any field.
    expect((await ask(q, { text: 'test_sea' }))[1].total).toBe(5);
    expect((await ask(q, { text: 'pear' }))[1].total).toBe(1);
    expect((await ask(q, { text: 'pear', query: { param1: 'html' } }))[1].total).toBe(0);
  });

  it('finds messages in every state and follows their moves after the index is built', async () => {
    const q = await prepQueue();
    const a = await q.send({ param1: 'alpha' });
    const run = await q.launcher.nth(0);
    q.clock.ms += 1000;
    const b = await q.send({ param1: 'alpha-two' });
    // Built now: a runs, b waits in que.
    const first = await ask(q, { query: { param1: 'alpha' } });
    expect(first[1].messages.map((m: { msg_id: string; state: string }) => [m.msg_id, m.state])).toEqual([
      [b.msg_id, 'que'],
      [a.msg_id, 'run'],
    ]);
    const finished = q.next('finished', ({ msg }) => msg.msg_id === a.msg_id);
    run.say('err ValueError: nope');
    run.exit(0);
    await finished;
    expect((await ask(q, { query: { param1: 'alpha' }, state: 'err' }))[1].messages).toEqual([
      { msg_id: a.msg_id, state: 'err', fields: expect.objectContaining({ param1: 'alpha' }) },
    ]);
    const c = await q.send({ param1: 'gamma' });
    expect(ids(await ask(q, { query: { param1: 'gamma' } }))).toEqual([c.msg_id]);
    await q.queue.ops.remove(c.msg_id, (await q.queue.ops.locate(c.msg_id))!);
    expect((await ask(q, { query: { param1: 'gamma' } }))[1].total).toBe(0);
  });

  it('checks a long value against the message itself', async () => {
    const q = await prepQueue();
    const long = `${'x'.repeat(500)}needle${'y'.repeat(94)}`;
    const m = await q.queue.ops.create({ dest: 'q', param2: long } as never, false);
    await q.queue.ops.create({ dest: 'q', param2: `${'x'.repeat(300)}` } as never, false);
    expect(ids(await ask(q, { query: { param2: 'needle' } }))).toEqual([m.msg_id]);
    expect(ids(await ask(q, { query: { param2: long }, exact: true }))).toEqual([m.msg_id]);
    expect((await ask(q, { query: { param2: long.slice(0, 400) }, exact: true }))[1].total).toBe(0);
    const hit = (await ask(q, { query: { param2: 'needle' } }))[1].messages[0];
    expect(hit.fields.param2).toHaveLength(256);
  });

  it('pages newest first with the total', async () => {
    const q = await prepQueue();
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      q.clock.ms += 1000;
      made.push((await q.queue.ops.create({ dest: 'q', param1: `n${i}` } as never, false)).msg_id);
    }
    const page = await ask(q, { offset: 10, limit: 5 });
    expect(page[1].total).toBe(30);
    expect(ids(page)).toEqual(made.slice().reverse().slice(10, 15));
  });

  it('refuses bad queries naming the field', async () => {
    const q = await prepQueue();
    expect(await ask(q, { query: ['param1'] })).toEqual(['fail', expect.stringMatching(/query.*object/)]);
    expect(await ask(q, { query: { 'bad field': 'x' } })).toEqual(['fail', expect.stringMatching(/query.*bad field/)]);
    expect(await ask(q, { query: { param1: { a: 1 } } })).toEqual(['fail', expect.stringMatching(/query\[param1\]/)]);
    expect(await ask(q, { query: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, 'x'])) })).toEqual([
      'fail',
      expect.stringMatching(/query.*at most 8/),
    ]);
    expect(await ask(q, { limit: 0 })).toEqual(['fail', expect.stringMatching(/limit/)]);
    expect(await ask(q, { state: 'gone' })).toEqual(['fail', expect.stringMatching(/state/)]);
    expect(await ask(q, { exact: 'maybe' })).toEqual(['fail', expect.stringMatching(/exact/)]);
    expect(await ask(q, { text: ['x'] })).toEqual(['fail', expect.stringMatching(/text/)]);
  });
});

describe('search index upkeep', () => {
  it('reads the fields of a message it learnt of by a move; answers numbers as numbers; acknowledged errors by their dotted page and gone once deleted', async () => {
    const q = await prepQueue();
    const a = await q.send({ param1: 'acked-one' });
    const s = await q.launcher.nth(0);
    const finished = q.next('finished', ({ msg }) => msg.msg_id === a.msg_id);
    s.say('err');
    s.exit(0);
    await finished;
    expect((await ask(q, { query: { param1: 'acked-one' } }))[1].messages[0]).toMatchObject({ state: 'err', fields: { count: 0, param1: 'acked-one' } });
    await q.queue.ops.ackErrs();
    expect((await ask(q, { query: { param1: 'acked-one' } }))[1].messages[0]).toMatchObject({ acked: true });
    // The free text leaves out ids and times: the id's digits match nothing.
    expect((await ask(q, { text: a.msg_id.slice(0, 8) }))[1].total).toBe(0);
    await q.queue.ops.remove(`.${a.msg_id}`, (await q.queue.ops.locate(`.${a.msg_id}`))!);
    expect((await ask(q, { query: { param1: 'acked-one' } }))[1].total).toBe(0);
    // A move of a message the index never saw made (as between two of the build's listings): its fields are read.
    const b = await q.queue.ops.create({ dest: 'q', param1: 'unseen' } as never, false);
    const entries = indexed(q);
    entries.delete(b.msg_id);
    const moved = q.next('moved', ({ id }) => id === b.msg_id);
    await q.queue.ops.commit(b.msg_id);
    await moved;
    await expect.poll(async () => (await ask(q, { query: { param1: 'unseen' } }))[1].total).toBe(1);
  });
});

describe('an empty search box', () => {
  it('is no text filter: it lists a message the index knows only by a move, while its fields are still being read', async () => {
    const q = await prepQueue();
    await q.queue.ops.create({ dest: 'q', param1: 'seen' } as never, false);
    const b = await q.queue.ops.create({ dest: 'q', param1: 'unseen' } as never, false);
    expect((await ask(q, {}))[1].total).toBe(2);
    // As between two of the build's listings: the index has not seen b made, so its commit's move makes a stub.
    const entries = indexed(q);
    entries.delete(b.msg_id);
    // Asked in the move's own listener: the stub's read (file I/O) cannot land before these answers,
    // which run on promise jobs only. The stub has no field a text is looked for in (msg_id is not one).
    let asked: Promise<[string, { total: number; messages: { msg_id: string; fields: object }[] }][]> | undefined;
    const onMoved = ({ id }: { id: string }) => {
      if (id === b.msg_id && !asked) asked = Promise.all([ask(q, {}), ask(q, { text: '' }), ask(q, { text: null })]);
    };
    q.queue.events.on('moved', onMoved);
    await q.queue.ops.commit(b.msg_id);
    q.queue.events.off('moved', onMoved);
    const [none, empty, nul] = await asked!;
    expect(none[1].messages.find((m) => m.msg_id === b.msg_id)?.fields).toEqual({ msg_id: b.msg_id });
    expect(none[1].total).toBe(2);
    expect(empty).toEqual(none);
    expect(nul).toEqual(none);
  });
});

describe('search index at start', () => {
  it('is read at start only for a queue that has been searched: nobody else pays for reading every message', async () => {
    const q1 = await inProcessQueue();
    await q1.queue.ops.create({ dest: 'q', param1: 'kept' } as never, false);
    await q1.queue.stats.search.warm();
    expect(q1.queue.stats.search.size).toBeNull();
    expect((await ask(q1, { query: { param1: 'kept' } }))[1].total).toBe(1);
    await q1.stop();
    const q2 = await inProcessQueue({}, { root: q1.root });
    open.push(q2);
    await q2.queue.stats.search.warm();
    expect(q2.queue.stats.search.size).toBe(1);
    expect((await ask(q2, { query: { param1: 'kept' } }))[1].total).toBe(1);
  });
});
