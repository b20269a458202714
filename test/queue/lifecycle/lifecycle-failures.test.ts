// Lifecycle operations whose disk writes fail, in-process: the message stays where it was, in memory as on disk; one deleted behind the queue is forgotten.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deadlineOf } from '../../../src/queue/rules/expiry.js';
import { type InProcess, inProcessQueue } from '../in-process.js';

let q: InProcess | null = null;
afterEach(async () => {
  await q?.close();
  q = null;
});

/** A directory where msg's temporary file goes: every write of the message's msg fails until it is gone. */
const blockWrites = (dir: string) => fs.mkdir(path.join(dir, 'msg.tmp', 'x'), { recursive: true });
const unblock = (dir: string) => fs.rm(path.join(dir, 'msg.tmp'), { recursive: true });
/** Takes a message's directory away behind the queue's back (a rename: its staging may still be writing into it). */
const takeAway = (p: InProcess, dir: string) => fs.rename(dir, path.join(p.root, `gone-${path.basename(dir)}`));
const stateOf = async (p: InProcess, id: string) => {
  const r = await p.cmd('get_message', { msg_id: id });
  return r[0] === 'ok' ? r[1].state : r[1];
};

describe('cancel', () => {
  async function waiting(p: InProcess, state: 'prep' | 'que'): Promise<string> {
    if (state === 'que') return (await p.send()).msg_id;
    return String((await p.cmd('prep_message', { dest: 'q' }))[1])
      .split('/')
      .pop()!;
  }

  it.each(['prep', 'que'] as const)('of a %s message whose msg cannot be written answers the failure; it stays, and a later cancel works', async (state) => {
    q = await inProcessQueue({}, { paused: true });
    const id = await waiting(q, state);
    const dir = q.queue.spool.msgDir(state, id);
    await blockWrites(dir);
    expect((await q.cmd('cancel_message', { msg_id: id }))[0]).toBe('fail');
    expect((await q.cmd('num_messages'))[state]).toBe(1);
    expect(await stateOf(q, id)).toBe(state);
    await unblock(dir);
    expect(await q.cmd('cancel_message', { msg_id: id })).toEqual(['ok', 'msg cancelled']);
    expect(await stateOf(q, id)).toBe('err');
  });

  it.each(['prep', 'que'] as const)('of a %s message whose directory is gone answers the failure and forgets it', async (state) => {
    q = await inProcessQueue({}, { paused: true });
    const id = await waiting(q, state);
    await takeAway(q, q.queue.spool.msgDir(state, id));
    expect((await q.cmd('cancel_message', { msg_id: id }))[0]).toBe('fail');
    expect((await q.cmd('num_messages'))[state]).toBe(0);
    expect(await stateOf(q, id)).toBe('msg not found');
  });
});

/**
 * A message the queue finishes on its own while it waits: an expiry (as the dispatcher takes it at
 * its deadline) or a failed dependency (as the dependency waits let it go). `finish` does it now.
 */
const waitingEnds = {
  expiry: async (p: InProcess) => {
    const t = Math.floor(p.clock.ms / 1000);
    const { msg_id } = await p.send({ expire_at: t + 3600 });
    return {
      id: msg_id,
      finish: async () => {
        p.clock.ms = (t + 3601) * 1000;
        const taken = p.queue.index.takeExpired();
        expect(taken.map((m) => m.msg_id)).toEqual([msg_id]);
        await p.queue.lifecycle.expire(taken[0], deadlineOf(taken[0], p.queue.config));
      },
    };
  },
  'failed dependency': async (p: InProcess) => {
    const dep = await p.send();
    const id = String((await p.cmd('create_message', { dest: 'q', depends: [`q/${dep.msg_id}`] }))[1])
      .split('/')
      .pop()!;
    return {
      id,
      finish: async () => {
        const msg = p.queue.index.dequeue(id)!;
        await p.queue.lifecycle.finishWaiting(msg, `DEPENDENCY FAILED - q/${dep.msg_id} is err (failed)`, 'dependency_failed', 'dependencies');
      },
    };
  },
};

describe.each(Object.keys(waitingEnds) as (keyof typeof waitingEnds)[])('an end by %s', (kind) => {
  it('ends the message in err with its outcome', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { id, finish } = await waitingEnds[kind](q);
    const finished = q.next('finished', (f) => f.msg.msg_id === id);
    await finish();
    expect((await finished).outcome.state).toBe('err');
    expect((await q.cmd('get_message', { msg_id: id }))[1]).toMatchObject({ state: 'err', outcome: kind === 'expiry' ? 'expired' : 'dependency_failed' });
  });

  it('whose msg cannot be written leaves the message in the que', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { id, finish } = await waitingEnds[kind](q);
    await blockWrites(q.queue.spool.msgDir('que', id));
    await finish();
    expect(await stateOf(q, id)).toBe('que');
  });

  it('of a message whose directory is gone forgets it', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { id, finish } = await waitingEnds[kind](q);
    await takeAway(q, q.queue.spool.msgDir('que', id));
    await finish();
    expect(await stateOf(q, id)).toBe('msg not found');
  });
});

describe('wake_pool', () => {
  it('counts only the messages it made due: one whose msg cannot be written keeps its due and is not counted', async () => {
    q = await inProcessQueue({}, { paused: true });
    const later = Math.floor(q.clock.ms / 1000) + 3600;
    const [stuck, woken] = [
      (await q.send({ dest: 'fleet:work', count: 1, due: later })).msg_id,
      (await q.send({ dest: 'fleet:work', count: 1, due: later })).msg_id,
    ];
    await blockWrites(q.queue.spool.msgDir('que', stuck));
    expect(await q.cmd('wake_pool', { queue: 'work' })).toEqual(['ok', 1]);
    const due = async (id: string) => (await q!.cmd('get_message', { msg_id: id }))[1].due;
    expect([await due(stuck), await due(woken)]).toEqual([later, Math.floor(q.clock.ms / 1000)]);
  });
});
