// Queued messages whose bodies stay on disk (src/spool/message-bodies.ts) behave as whole ones: coalescing, a priority change and a cancel keep every param.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';

const ctx = perTestRoot();
/** Over the 1 KiB at which a queued message leaves its body on disk. */
const big = (c: string) => c.repeat(4096);

async function onDisk(q: QueueProc, state: 'que' | 'err', id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await fs.readFile(path.join(q.paths.state[state], id, 'msg'), 'utf8'));
}

describe('light queued messages', () => {
  it('coalesce on a large param, compared by content', async () => {
    await addQueue(ctx.t.root, 'lc', { coalesce_params: [3] });
    const pause = path.join(ctx.t.root, 'config', 'lc.pause');
    await fs.writeFile(pause, '');
    ctx.q = await QueueProc.start(ctx.t.root, 'lc');
    const parent = await ctx.q.send({ param1: 'done', param3: big('a') });
    const same = await ctx.q.send({ param1: 'done', param3: big('a') });
    // Same length and first 4,095 characters: only a comparison of whole contents tells them apart.
    const other = await ctx.q.send({ param1: 'done', param3: `${big('a').slice(0, -1)}b` });
    await fs.rm(pause);
    const pm = await ctx.q.waitState(parent, ['done']);
    expect(pm.dups).toEqual([`http://127.0.0.1:${ctx.t.port}/q/lc/${same}`]);
    expect((await ctx.q.waitState(same, ['done'])).param3).toBe(big('a'));
    const om = await ctx.q.waitState(other, ['done']);
    expect(om.dups).toBeUndefined();
    expect(om.param3).toBe(`${big('a').slice(0, -1)}b`);
  });

  it('keep every param through a priority change and a cancel, in memory and on disk', async () => {
    await addQueue(ctx.t.root, 'lp');
    await fs.writeFile(path.join(ctx.t.root, 'config', 'lp.pause'), '');
    ctx.q = await QueueProc.start(ctx.t.root, 'lp');
    const id = await ctx.q.send({ param1: 'done', param2: big('p'), param4: 'four', src: 'light-test' });
    expect(await ctx.q.cmd('set_priority', { msg_id: id, priority: 5 })).toEqual(['ok', expect.anything()]);
    const after = await onDisk(ctx.q, 'que', id);
    expect(after).toMatchObject({ param1: 'done', param2: big('p'), param4: 'four', src: 'light-test', priority: 5 });
    expect(await ctx.q.cmd('cancel_message', { msg_id: id, reason: 'test' })).toEqual(['ok', 'msg cancelled']);
    const m = await ctx.q.waitState(id, ['err']);
    expect(m).toMatchObject({ param2: big('p'), param4: 'four', src: 'light-test', priority: 5 });
    expect(await onDisk(ctx.q, 'err', id)).toMatchObject({ param2: big('p'), param4: 'four', outcome: 'cancelled' });
  });
});
