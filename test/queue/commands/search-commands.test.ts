// The search command's arguments at and beyond their bounds, its default page, detail rows of running and
// requeued messages, the bounded wait for the index and its first read.
import { describe, expect, it } from 'vitest';
import { searchQuery } from '../../../src/queue/commands/search-commands.js';
import { cmd, endRun, inProcessQueues } from '../in-process-session.js';
import { waitFor } from '../../helpers/rq-root.js';
import { ask, ids, later } from '../observers/search-session.js';

const queue = inProcessQueues();
const MAX_MS = 253_402_300_800_000;

describe('search arguments', () => {
  it('takes an empty or null query as none, numbers as texts, eight fields, names and texts at their longest', async () => {
    const q = await queue();
    const a = (await q.queue.ops.create({ dest: 'q', param1: 'x', param2: 42 } as never, false)).msg_id;
    expect((await ask(q, { query: '' }))[1].total).toBe(1);
    expect((await ask(q, { query: null }))[1].total).toBe(1);
    expect(ids(await ask(q, { query: { param2: 42 }, exact: true }))).toEqual([a]);
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`f${i}`, 'x']));
    expect(await ask(q, { query: eight })).toEqual(['ok', { total: 0, messages: [] }]);
    expect(await ask(q, { query: { ['f'.repeat(64)]: 'x' } })).toEqual(['ok', { total: 0, messages: [] }]);
    expect(await ask(q, { query: { ['f'.repeat(65)]: 'x' } })).toEqual([
      'fail',
      `query: expected field names of letters, digits and _ (1-64 characters), received "${'f'.repeat(65)}"`,
    ]);
    // Anchored both ends: a good name with a bad character before or after is refused.
    expect((await ask(q, { query: { 'param1-': 'x' } }))[0]).toBe('fail');
    expect((await ask(q, { query: { '-param1': 'x' } }))[0]).toBe('fail');
    expect((await ask(q, { query: { '': 'x' } }))[0]).toBe('fail');
    expect(await ask(q, { query: { param1: 'x'.repeat(1000) } })).toEqual(['ok', { total: 0, messages: [] }]);
    expect(await ask(q, { query: { param1: 'x'.repeat(1001) } })).toEqual([
      'fail',
      expect.stringMatching(/^query\[param1\]: expected a text of at most 1000 characters/),
    ]);
    expect(await ask(q, { query: { param1: true } })).toEqual(['fail', 'query[param1]: expected a text of at most 1000 characters, received true']);
    expect(await ask(q, { query: 'param1' })).toEqual(['fail', expect.stringMatching(/^query: expected an object of field name to text/)]);
    expect(await ask(q, { query: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`f${i}`, 'x'])) })).toEqual([
      'fail',
      'query: expected at most 8 fields, received 9 fields',
    ]);
  });

  it('takes a text of 1000 characters, not 1001 nor a number; an empty acked is no filter', async () => {
    const q = await queue();
    await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false);
    expect(await ask(q, { text: 'y'.repeat(1000) })).toEqual(['ok', { total: 0, messages: [] }]);
    expect(await ask(q, { text: 'y'.repeat(1001) })).toEqual(['fail', expect.stringMatching(/^text: expected a text of at most 1000 characters/)]);
    expect(await ask(q, { text: 5 })).toEqual(['fail', 'text: expected a text of at most 1000 characters, received 5']);
    expect((await ask(q, { acked: '' }))[1].total).toBe(1);
    expect((await ask(q, { acked: null }))[1].total).toBe(1);
  });

  it('takes created times from 0 to the year 9999 in whole milliseconds, the end after the start', async () => {
    const q = await queue();
    const a = (await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false)).msg_id;
    const t = q.clock.ms;
    expect(ids(await ask(q, { created_from: 0, created_to: MAX_MS }))).toEqual([a]);
    expect(ids(await ask(q, { created_from: '', created_to: null }))).toEqual([a]);
    expect(ids(await ask(q, { created_from: t, created_to: t + 1 }))).toEqual([a]);
    expect(await ask(q, { created_from: t, created_to: t })).toEqual(['fail', `created_to: expected a time after created_from (${t}), received ${t}`]);
    expect(await ask(q, { created_from: -1 })).toEqual(['fail', 'created_from: expected epoch milliseconds (a whole number), received -1']);
    expect(await ask(q, { created_to: MAX_MS + 1 })).toEqual(['fail', `created_to: expected epoch milliseconds (a whole number), received ${MAX_MS + 1}`]);
    expect(await ask(q, { created_to: 1.5 })).toEqual(['fail', 'created_to: expected epoch milliseconds (a whole number), received 1.5']);
  });

  it('the query as the filter of a bulk command reads it: defaults, what is left out, and a limit of its own', () => {
    expect(searchQuery({})).toEqual({ fields: {}, text: undefined, exact: false, state: undefined, offset: 0, limit: 100 });
    expect(searchQuery({}, 7).limit).toBe(7);
    const full = searchQuery({
      query: { a: 1 },
      text: 't',
      exact: true,
      state: 'err',
      acked: false,
      created_from: 1,
      created_to: 2,
      sort: 'due',
      order: 'asc',
      offset: 3,
      limit: 4,
    });
    expect(full).toEqual({
      fields: { a: '1' },
      text: 't',
      exact: true,
      state: 'err',
      acked: false,
      createdFrom: 1,
      createdTo: 2,
      sort: 'due',
      order: 'asc',
      offset: 3,
      limit: 4,
    });
    expect(Object.keys(searchQuery({ acked: '', created_from: null, sort: '', order: '' })).sort()).toEqual([
      'exact',
      'fields',
      'limit',
      'offset',
      'state',
      'text',
    ]);
  });

  it('answers 100 messages when no limit is given', async () => {
    const q = await queue();
    for (let i = 0; i < 101; i++) await q.queue.ops.create({ dest: 'q', param1: `n${i}` } as never, false);
    const page = (await ask(q, {}))[1];
    expect(page.total).toBe(101);
    expect(page.messages).toHaveLength(100);
  });
});

describe('search detail', () => {
  it('a running message: its status, the time it has run so far, no finish; detail false adds nothing', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a' })).msg_id;
    const s = await q.launcher.nth(0);
    s.say('status working hard');
    await expect.poll(async () => (await cmd(q, 'get_message', { msg_id: a }))[1].status).toMatch(/working hard/);
    q.clock.ms += 2500;
    const reply = await ask(q, { detail: true });
    expect(reply).toEqual([
      'ok',
      {
        total: 1,
        messages: [{ msg_id: a, state: 'run', fields: expect.any(Object), status: 'run - working hard', ms: 2500, runs: 1, total_ms: 2500, finished: null }],
      },
    ]);
    expect((await ask(q, { detail: false }))[1].messages[0]).toEqual({ msg_id: a, state: 'run', fields: expect.any(Object) });
    expect((await ask(q, { detail: '' }))[1].messages[0]).toEqual({ msg_id: a, state: 'run', fields: expect.any(Object) });
  });

  it('a message running again: the time of this run, not the last one; its runs counted and their times added', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a', due: later(q) })).msg_id;
    await cmd(q, 'run_message', { msg_id: a });
    await endRun(q, 0, a, 'err broken', 3000);
    expect(await cmd(q, 'requeue_message', { msg_id: a })).toEqual(['ok', 'msg requeued']);
    await q.launcher.nth(1);
    q.clock.ms += 700;
    expect((await ask(q, { detail: true }))[1].messages[0]).toMatchObject({ state: 'run', ms: 700, runs: 2, total_ms: 3700, finished: null });
  });

  it('a finished message requeued: the last run time stays, the finish is cleared', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a', due: later(q) })).msg_id;
    expect(await cmd(q, 'run_message', { msg_id: a })).toEqual(['ok', expect.anything()]);
    await endRun(q, 0, a, 'err broken', 3000);
    const err = (await ask(q, { detail: true }))[1].messages[0];
    expect(err).toMatchObject({ state: 'err', status: 'err - broken', ms: 3000, finished: q.clock.ms });
    q.clock.ms += 1000;
    await q.queue.ops.ackErrs();
    const acked = (await ask(q, { detail: true }))[1].messages[0];
    expect(acked).toMatchObject({ state: 'err', acked: true, status: 'err - broken', ms: 3000, finished: err.finished });
    q.clock.ms += 1000;
    expect(await cmd(q, 'requeue_message', { msg_id: a, due: later(q) })).toEqual(['ok', 'msg requeued']);
    const again = (await ask(q, { detail: true }))[1].messages[0];
    expect(again).toMatchObject({ state: 'que', ms: 3000, runs: 1, total_ms: 3000, finished: null });
    expect(again.acked).toBeUndefined();
    expect(ids(await ask(q, { acked: true }))).toEqual([]);
    // Back in que it has not finished: after a finished one, whichever the order.
    const b = (await q.send({ param1: 'b', due: later(q) })).msg_id;
    await cmd(q, 'run_message', { msg_id: b });
    await endRun(q, 1, b, 'done fine');
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual([b, a]);
    expect(ids(await ask(q, { sort: 'finished', order: 'desc' }))).toEqual([b, a]);
  });
});

describe('bulk with a filter', () => {
  it('picks every match of the filter (no page), each with its state and acknowledgement', async () => {
    const q = await queue();
    const errs: string[] = [];
    for (let i = 0; i < 3; i++) {
      q.clock.ms += 1000;
      const m = (await q.send({ param1: 'e' })).msg_id;
      await endRun(q, i, m, 'err broken');
      errs.push(m);
      if (i === 0) await q.queue.ops.ackErrs();
    }
    for (let i = 0; i < 2; i++) await q.queue.ops.create({ dest: 'q', param1: 'p' } as never, false);
    const count = async (op: string, filter: unknown) => (await cmd(q, 'bulk', { op, filter, dry_run: true }))[1].count;
    expect(await count('retry', { limit: 1 })).toBe(3);
    expect(await count('ack', {})).toBe(2);
    expect(await count('ack', { acked: true })).toBe(0);
    expect(await count('delete', { query: { param1: 'p' } })).toBe(2);
    expect(await count('delete', { state: 'err', acked: true })).toBe(1);
  });
});

describe('search wait_ms', () => {
  it('answers "building" with how many were read when the first read outlasts the wait, and the page once read', async () => {
    const q = await queue();
    await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false);
    await q.queue.ops.create({ dest: 'q', param1: 'y' } as never, false);
    const spool = q.queue.spool as unknown as { readMessage: (...a: unknown[]) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reads = 0;
    spool.readMessage = async (...a: unknown[]) => {
      if (reads++ > 0) await held;
      return real(...a);
    };
    // The first ask starts the build; whether its first read is back within 50 ms depends on the
    // machine (under load the readdirs alone took longer), so only "building" is sure here.
    const first = await ask(q, { wait_ms: 50 });
    expect(first).toEqual(['ok', { total: 0, messages: [], building: { read: expect.any(Number) } }]);
    expect(first[1].building.read).toBeLessThanOrEqual(1);
    // Once the first read is counted and the second is held, an ask that outlasts its wait says so.
    await waitFor(() => reads >= 2 && q.queue.stats.search.reading === 1, 'the first read to be counted and the second to be held', 10_000, 1);
    expect(await ask(q, { wait_ms: 50 })).toEqual(['ok', { total: 0, messages: [], building: { read: 1 } }]);
    expect(q.queue.stats.search.ready).toBe(false);
    // Made and deleted while the build reads: heard, and replayed over what it read.
    const z = (await q.queue.ops.create({ dest: 'q', param1: 'z' } as never, false)).msg_id;
    const x = (await ask(q, { wait_ms: 1 }))[1];
    expect(x.building).toBeDefined();
    release();
    await q.queue.stats.search.whenBuilt();
    expect(q.queue.stats.search.ready).toBe(true);
    spool.readMessage = real;
    expect(ids(await ask(q, { query: { param1: 'z' } }))).toEqual([z]);
    await q.queue.ops.remove(z, (await q.queue.ops.locate(z))!);
    expect(await ask(q, { wait_ms: 50 })).toEqual(['ok', { total: 2, messages: expect.any(Array) }]);
    // Asked with wait_ms first, the queue is marked searched: the next start reads it at once.
    await q.stop();
    const q2 = await queue({}, { root: q.root });
    await q2.queue.stats.search.warm();
    expect(q2.queue.stats.search.size).toBe(2);
  });

  it('takes a wait of at most a minute', async () => {
    const q = await queue();
    expect(await ask(q, { wait_ms: 60_001 })).toEqual(['fail', expect.stringMatching(/^wait_ms: expected a whole number from 1 to 60000/)]);
  });

  it('waits up to wait_ms for a read that ends in time', async () => {
    const q = await queue();
    await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false);
    const spool = q.queue.spool as unknown as { readMessage: (...a: unknown[]) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    spool.readMessage = async (...a: unknown[]) => {
      await new Promise((r) => setTimeout(r, 30));
      return real(...a);
    };
    expect(await ask(q, { wait_ms: 60_000 })).toEqual(['ok', { total: 1, messages: [expect.objectContaining({ state: 'prep' })] }]);
  });
});

describe('search index build', () => {
  it('a failed first read answers the error, and the next search reads again', async () => {
    const q = await queue();
    await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false);
    const spool = q.queue.spool as unknown as { listFlat: (...a: unknown[]) => Promise<string[]> };
    const real = spool.listFlat.bind(spool);
    spool.listFlat = async () => {
      throw new Error('disk on fire');
    };
    expect(await ask(q, {})).toEqual(['fail', 'internal error: disk on fire']);
    expect(await ask(q, { wait_ms: 1000 })).toEqual(['fail', 'internal error: disk on fire']);
    spool.listFlat = real;
    expect((await ask(q, {}))[1].total).toBe(1);
  });

  it('leaves out a message it cannot read (gone between the listing and the read)', async () => {
    const q = await queue();
    const a = (await q.queue.ops.create({ dest: 'q', param1: 'x' } as never, false)).msg_id;
    const b = (await q.queue.ops.create({ dest: 'q', param1: 'y' } as never, false)).msg_id;
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    spool.readMessage = async (state: string, id: string) => {
      if (id === a) throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      return real(state, id);
    };
    expect(ids(await ask(q, {}))).toEqual([b]);
  });
});

describe('search detail when reads fail', () => {
  it('the state stands for a status it cannot read, and no history means no times', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a', due: later(q) })).msg_id;
    const ops = q.queue.ops as unknown as { statusView: (...a: unknown[]) => Promise<unknown> };
    ops.statusView = async () => {
      throw new Error('no status');
    };
    const spool = q.queue.spool as unknown as { readHistory: (...a: unknown[]) => Promise<unknown> };
    spool.readHistory = async () => {
      throw new Error('no history');
    };
    expect((await ask(q, { detail: true }))[1].messages).toEqual([
      { msg_id: a, state: 'que', fields: expect.any(Object), status: 'que', ms: null, runs: 0, total_ms: null, finished: null },
    ]);
  });
});
