// A real SIGKILL of a queue process at its journal's checkpoint, where the checkpointed segment is emptied to take the next records: frozen just before the truncate and just after it (not yet synced), killed there, started again. Every message is in a known state, none is made twice, and the journal takes the next create.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdAt, killFrozenAfterEach } from '../helpers/crash-point.js';
import { perTestRoot } from '../helpers/per-test-root.js';
import { QueueProc, addQueue } from '../helpers/rq-root.js';

const ctx = perTestRoot();
const frozen = killFrozenAfterEach(ctx);

const SEGMENT = /\/journal\/\d{12}\.log$/;

/** How many times a script started for the message in `dir` (RQ START headers in its log). */
async function logStarts(dir: string): Promise<number> {
  const log = await fs.readFile(path.join(dir, 'job', 'stdio.log'), 'utf8').catch(() => '');
  return (log.match(/ - RQ START - /g) ?? []).length;
}

async function starts(q: QueueProc, id: string): Promise<number> {
  const m = (await q.cmd('get_message', { msg_id: id }))[1] as { path: string };
  return logStarts(path.join(q.root, m.path));
}

describe('kill -9 at the emptying of a checkpointed journal segment', () => {
  it.each(['before', 'after'] as const)(
    '%s its truncate: the restart runs again the message whose end it cut, keeps the one that waits, makes none twice, and the journal takes the next create',
    async (when) => {
      await addQueue(ctx.t.root, 'jc');
      const point = await holdAt(ctx.t.root, { kind: 'truncate', path: SEGMENT, when });
      ctx.q = frozen(await QueueProc.start(ctx.t.root, 'jc', { env: point.env }));
      // One message that waits an hour in que/, then one that runs: its end's checkpoint covers both records.
      const waiting = await ctx.q.send({ param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
      const ran = await ctx.q.send({ param1: 'done' });
      const at = await point.reached();
      expect(at.pid).toBe(ctx.q.pid);
      expect(at.path).toMatch(SEGMENT);
      const held = await fs.readFile(at.path!, 'utf8');
      // Before: the records are still there, covered by the checkpoint's filesystem sync; after: gone.
      if (when === 'before') expect(held).toContain(waiting);
      else expect(held).toBe('');

      // The checkpoint comes before the first directory sync after the creates: the run's end, once
      // its script has exited, before the move out of run/ that would record it.
      expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([ran]);
      expect(await fs.readdir(ctx.q.paths.state.que)).toEqual([waiting]);
      expect(await logStarts(path.join(ctx.q.paths.state.run, ran))).toBe(1);

      await ctx.q.kill9();
      const q = (ctx.q = await QueueProc.start(ctx.t.root, 'jc'));
      // A run whose end was not recorded runs again (at least once), and only once more.
      await q.waitState(ran, ['done']);
      expect(await starts(q, ran)).toBe(2);
      expect(await q.state(waiting)).toBe('que');
      expect((await q.cmd('get_message', { msg_id: waiting }))[1]).toMatchObject({ msg_id: waiting, param1: 'done' });
      // Nothing made again from a replayed record: two messages, no more.
      expect(await q.cmd('num_messages')).toMatchObject({ que: 1, run: 0, done: 1, err: 0 });

      const next = await q.send({ param1: 'done' });
      await q.waitState(next, ['done']);
      expect(await starts(q, next)).toBe(1);
      expect(await q.cmd('num_messages')).toMatchObject({ que: 1, run: 0, done: 2, err: 0 });
    },
    60_000,
  );
});
