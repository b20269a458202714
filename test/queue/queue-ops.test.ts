// The operations behind the socket commands, in-process: prep/commit, locate, remove, run now, clone, ack, events.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type InProcess, inProcessQueue } from './in-process.js';

let q: InProcess | null = null;
afterEach(async () => {
  await q?.close();
  q = null;
});

/** Runs one message to its end with `line` and `code`, then pauses the queue so later sends wait. */
async function finishThenPause(p: InProcess, fields: Record<string, unknown>, line: string, code: number) {
  const m = await p.runToEnd(fields, line, code);
  await p.pause();
  return m;
}

const paused = () => inProcessQueue({}, { paused: true });

describe('message operations', () => {
  it('prep then commit: in prep (memory and disk) until the commit, then in que; created events for both', async () => {
    q = await paused();
    const created = q.next('created');
    const m = await q.queue.ops.create({ dest: 'q' }, false);
    expect(await created).toMatchObject({ state: 'prep' });
    expect(await q.queue.ops.locate(m.msg_id)).toEqual({ state: 'prep', dir: q.queue.spool.msgDir('prep', m.msg_id) });
    expect(q.queue.counts()).toMatchObject({ prep: 1, que: 0 });
    const moved = q.next('moved');
    expect(await q.queue.ops.commit(m.msg_id)).toBe(true);
    expect(await moved).toMatchObject({ id: m.msg_id, from: 'prep', to: 'que', actor: 'commit' });
    expect(await q.state(m.msg_id)).toBe('que');
    expect(q.queue.counts()).toMatchObject({ prep: 0, que: 1 });
    expect(await q.queue.ops.commit(m.msg_id)).toBe(false);
  });

  it('run now puts a message before every other, however late its due', async () => {
    q = await paused();
    const first = await q.send();
    const late = await q.send({ due: Math.floor(q.clock.ms / 1000) + 3600 });
    await q.queue.ops.runNow(late.msg_id);
    expect(q.queue.index.queuedInOrder(2).map((m) => m.msg_id)).toEqual([late.msg_id, first.msg_id]);
    expect(JSON.parse(await fs.readFile(path.join(q.queue.spool.msgDir('que', late.msg_id), 'msg'), 'utf8')).due).toBe(Number(first.due) - 1);
  });

  it('remove from que and from done: gone from memory and disk, counts follow, removed events', async () => {
    q = await inProcessQueue();
    const m = await finishThenPause(q, {}, 'done', 0);
    const waiting = await q.send();
    for (const id of [waiting.msg_id, m.msg_id]) {
      const where = (await q.queue.ops.locate(id))!;
      const removed = q.next('removed');
      await q.queue.ops.remove(id, where);
      expect(await removed).toEqual({ id, state: where.state });
      expect(await q.queue.ops.locate(id)).toBeNull();
    }
    expect(q.queue.counts()).toMatchObject({ que: 0, done: 0 });
  });

  it('clone of an err message: a new que message with count 0, cloned_from and the same params', async () => {
    q = await inProcessQueue();
    const m = await finishThenPause(q, { param1: 'x', param2: 'y' }, 'err', 1);
    const clone = await q.queue.ops.clone(m.msg_id, (await q.queue.ops.locate(m.msg_id))!);
    expect(q.queue.index.queued(clone.msg_id)).toMatchObject({ param1: 'x', param2: 'y', count: 0, cloned_from: m.msg_id });
    expect(q.queue.counts()).toMatchObject({ err: 1, que: 1 });
    expect(await q.queue.ops.ackErrs()).toEqual({ total: 1, done: 1, failed: 0, failures: [] });
    expect(q.queue.counts()).toMatchObject({ err: 0 });
  });
});
