// The search index kept while the queue moves messages under it: messages it learns of only by an event (a move,
// an acknowledgement) during or after its build, a stub's reads (at most five), and a failed build's events dropped.
import { describe, expect, it } from 'vitest';
import { endRun, inProcessQueues } from '../in-process-session.js';
import { ask, ids, indexed, later } from './search-session.js';

const queue = inProcessQueues();

describe('search index upkeep by events', () => {
  it("a reschedule and a new priority change the list's due and priority, and its order by due", async () => {
    const q = await queue({}, { paused: true });
    const a = (await q.send({ due: later(q) })).msg_id;
    const b = (await q.send({ due: later(q) + 60 })).msg_id;
    expect(ids(await ask(q, { sort: 'due', order: 'asc' }))).toEqual([a, b]);
    await q.cmd('reschedule_message', { msg_id: a, due: later(q) + 120 });
    await q.cmd('set_priority', { msg_id: b, priority: 5 });
    expect(ids(await ask(q, { sort: 'due', order: 'asc' }))).toEqual([b, a]);
    const fields = Object.fromEntries((await ask(q, {}))[1].messages.map((m: { msg_id: string; fields: object }) => [m.msg_id, m.fields]));
    expect(fields[a]).toMatchObject({ due: later(q) + 120 });
    expect(fields[b]).toMatchObject({ due: later(q) + 60, priority: 5 });
    expect(await ask(q, { query: { priority: '5' }, exact: true })).toMatchObject([expect.anything(), { total: 1 }]);
  });

  it('a message it learnt of by its move to err gets the time it finished', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a' })).msg_id;
    const sa = await q.launcher.nth(0);
    expect((await ask(q, {}))[1].total).toBe(1);
    // As if its create had come before the build and its listing after the run began: only the move to err tells of it.
    indexed(q).delete(a);
    q.clock.ms += 1000;
    const fa = q.next('finished', ({ msg }) => msg.msg_id === a);
    sa.say('err broken');
    sa.exit(0);
    await fa;
    q.clock.ms += 1000;
    const b = (await q.send({ param1: 'b' })).msg_id;
    await endRun(q, 1, b, 'done fine', 1000);
    // Both finish times are this queue's clock, a's the earlier (a status file's would be today's real time).
    expect(ids(await ask(q, { sort: 'finished', order: 'asc' }))).toEqual([a, b]);
    expect((await ask(q, { query: { param1: 'a' } }))[1].messages).toEqual([{ msg_id: a, state: 'err', fields: expect.objectContaining({ param1: 'a' }) }]);
  });

  it('an error acknowledged between the build listing err and reading it is found, acknowledged, by its fields', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'acked late' })).msg_id;
    await endRun(q, 0, a, 'err broken', 1000);
    expect((await ask(q, {}))[1].total).toBe(1);
    // As if the build had listed err before the rename and failed to read the message after it: only the ack tells of it.
    indexed(q).delete(a);
    await q.queue.ops.ackErrs();
    await expect
      .poll(async () => (await ask(q, { query: { param1: 'acked late' } }))[1].messages)
      .toEqual([{ msg_id: a, state: 'err', acked: true, fields: expect.objectContaining({ param1: 'acked late' }) }]);
  });

  it('an error it learns of by its acknowledgement is found by its id while its fields are still being read', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'acked late' })).msg_id;
    await endRun(q, 0, a, 'err broken', 1000);
    expect((await ask(q, {}))[1].total).toBe(1);
    indexed(q).delete(a);
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reading = false;
    spool.readMessage = async (state: string, id: string) => {
      if (id === `.${a}`) {
        reading = true;
        await held;
      }
      return real(state, id);
    };
    await q.queue.ops.ackErrs();
    await expect.poll(() => reading).toBe(true);
    expect((await ask(q, { query: { msg_id: a } }))[1].messages).toEqual([{ msg_id: a, state: 'err', acked: true, fields: { msg_id: a } }]);
    release();
    spool.readMessage = real;
    await expect.poll(async () => (await ask(q, { query: { param1: 'acked late' } }))[1].total).toBe(1);
  });

  it('a failed build forgets what it heard: the next build reads the disk, not moves from before it', async () => {
    const q = await queue();
    const a = (await q.queue.ops.create({ dest: 'q', param1: 'stays', due: later(q) } as never, false)).msg_id;
    await q.queue.ops.commit(a);
    const spool = q.queue.spool as unknown as { listFlat: (...args: unknown[]) => Promise<string[]> };
    const real = spool.listFlat.bind(spool);
    let fail!: (err: Error) => void;
    spool.listFlat = () => new Promise((_, reject) => (fail = reject));
    const first = ask(q, {});
    await expect.poll(() => fail).toBeDefined();
    // Heard while the failing build ran: a move that the disk no longer shows by the time of the next build.
    q.queue.events.emit('moved', { id: a, from: 'que', to: 'run' } as never);
    fail(Object.assign(new Error('no more descriptors'), { code: 'EMFILE' }));
    expect((await first)[0]).not.toBe('ok');
    spool.listFlat = real;
    expect((await ask(q, { query: { param1: 'stays' } }))[1].messages).toEqual([
      { msg_id: a, state: 'que', fields: expect.objectContaining({ param1: 'stays' }) },
    ]);
  });

  it('a stub learnt of by a move is read where it went when it moved on before the read', async () => {
    const q = await queue();
    const b = (await q.queue.ops.create({ dest: 'q', param1: 'moving', due: later(q) } as never, false)).msg_id;
    expect((await ask(q, {}))[1].total).toBe(1);
    const entries = indexed(q);
    entries.delete(b);
    // Committed (prep → que) and, as the index hears it, started (que → run) before the stub's read in que can happen.
    const onMoved = ({ id, to }: { id: string; to: string }) => {
      if (id === b && to === 'que') q.queue.events.emit('moved', { id: b, from: 'que', to: 'run' } as never);
    };
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    const reads: string[] = [];
    spool.readMessage = async (state: string, id: string) => {
      reads.push(state);
      if (id === b && state === 'que') throw Object.assign(new Error('gone'), { code: 'ENOENT' });
      return real(state === 'run' ? 'que' : state, id);
    };
    q.queue.events.on('moved', onMoved);
    await q.queue.ops.commit(b);
    q.queue.events.off('moved', onMoved);
    await expect.poll(async () => (await ask(q, { query: { param1: 'moving' } }))[1].total).toBe(1);
    expect(reads).toEqual(['que', 'run']);
  });

  it('a stub whose message is deleted before its read is simply gone', async () => {
    const q = await queue();
    const b = (await q.queue.ops.create({ dest: 'q', param1: 'brief', due: later(q) } as never, false)).msg_id;
    expect((await ask(q, {}))[1].total).toBe(1);
    const entries = indexed(q);
    entries.delete(b);
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    let failed!: () => void;
    const readFailed = new Promise<void>((r) => (failed = r));
    spool.readMessage = async (state: string, id: string) => {
      if (id !== b) return real(state, id);
      // Deleted meanwhile: its removal took the entry out before the read answers.
      entries.delete(b);
      setImmediate(failed);
      throw Object.assign(new Error('gone'), { code: 'ENOENT' });
    };
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      await q.queue.ops.commit(b);
      await readFailed;
      // A rejection nobody handles is reported once the microtasks drain, before the next macrotask.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onUnhandled);
      spool.readMessage = real;
    }
    expect(unhandled).toEqual([]);
    expect((await ask(q, {}))[1].total).toBe(0);
    expect(await q.state(b)).toBe('que');
  });

  it('gives up reading a stub after five moves that each beat the read', async () => {
    const q = await queue();
    const b = (await q.queue.ops.create({ dest: 'q', param1: 'restless', due: later(q) } as never, false)).msg_id;
    expect((await ask(q, {}))[1].total).toBe(1);
    const entries = indexed<{ state: string }>(q);
    entries.delete(b);
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    let reads = 0;
    spool.readMessage = async (state: string, id: string) => {
      if (id !== b) return real(state, id);
      reads++;
      // Each read finds the message moved on (as the index hears it): que and run in turn.
      if (reads <= 10) entries.get(b)!.state = state === 'que' ? 'run' : 'que';
      throw Object.assign(new Error('moved'), { code: 'ENOENT' });
    };
    try {
      await q.queue.ops.commit(b);
      // Every read of the chain fails without I/O, so the whole chain is microtasks: one macrotask later it has ended.
      await new Promise((r) => setImmediate(r));
    } finally {
      spool.readMessage = real;
    }
    expect(reads).toBe(5);
  });
});
