// A run that folded duplicates and fails while finishing them (a disk error, not a want of space): each message ends in one place, and the queue says the place it is in.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ioError, noSpaceFs } from '../../helpers/no-space-fs.js';
import { type InProcess, inProcessQueue } from '../in-process.js';

/** The states whose directories hold message `id` on disk. */
async function onDisk(q: InProcess, id: string): Promise<string[]> {
  const held: string[] = [];
  for (const state of ['que', 'run', 'done', 'err'] as const) if (await q.queue.spool.exists(state, id)) held.push(state);
  return held;
}

const statusOf = async (q: InProcess, id: string): Promise<string> => (await q.cmd('get_message_status', { msg_id: id }))[1].status;

describe('a run whose second folded duplicate cannot be finished', () => {
  it('goes to err; the duplicate it finished stays done (not queued again), the other waits in the que and later runs alone', async () => {
    const disk = { refused: (_f: string) => false };
    const q = await inProcessQueue({ num_workers: 1, coalesce_params: [1] }, { fs: () => noSpaceFs((f) => disk.refused(f), ioError) });
    try {
      await q.send({ param1: 'z' });
      const sz = await q.launcher.nth(0);
      const a = await q.send({ param1: 'x' });
      const sent = [(await q.send({ param1: 'x' })).msg_id, (await q.send({ param1: 'x' })).msg_id];
      sz.say('done z');
      sz.exit(0);
      // A starts with both folded into it (spec §3.5); they are finished in this order.
      const sa = await q.launcher.nth(1);
      const run = q.queue.index.run(a.msg_id)!;
      const [first, second] = run.dups.map((m) => m.msg_id);
      expect([first, second].sort()).toEqual([...sent].sort());
      // Paused, so that nothing starts after A's end: what the queue says is seen at rest.
      await q.pause();
      // The first write of the second one's status fails as a broken disk's does; every other write goes through.
      const secondStatus = path.join(q.queue.spool.msgDir('que', second), 'status');
      let once = true;
      disk.refused = (f) => f === secondStatus && once && !(once = false);
      sa.say('done a');
      sa.exit(0);
      await run.ended;
      expect(await statusOf(q, a.msg_id)).toMatch(/^err - rq internal error: EIO/);
      expect(await onDisk(q, a.msg_id)).toEqual(['err']);
      // The first was finished before the failure: done, on disk and in what the queue says, and nowhere else.
      expect(await q.state(first)).toBe('done');
      expect(await onDisk(q, first)).toEqual(['done']);
      expect(await statusOf(q, first)).toBe(`done - duplicate ${q.queue.spool.fullId(a.msg_id)}`);
      // The second was not: back in the que, on its own.
      expect(await q.state(second)).toBe('que');
      expect(await onDisk(q, second)).toEqual(['que']);
      expect(await q.cmd('num_messages')).toMatchObject({ que: 1, run: 0, done: 2, err: 1 });
      // Resumed, the second runs alone; the first never starts again.
      await fs.rm(path.join(q.root, 'config', 'q.pause'));
      expect(q.queue.status()).toBe('UP');
      const sc = await q.launcher.nth(2);
      expect(sc.env.RQ_MSG_ID).toBe(second);
      expect(q.queue.index.run(second)!.dups).toEqual([]);
      const finished = q.next('finished', (e) => e.msg.msg_id === second);
      sc.say('done c');
      sc.exit(0);
      await finished;
      expect(q.launcher.started).toHaveLength(3);
      expect([await onDisk(q, first), await onDisk(q, second)]).toEqual([['done'], ['done']]);
      expect(await q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, done: 3, err: 1 });
    } finally {
      await q.close();
    }
  });
});
