// Crash recovery: kill -9 of the queue process while scripts run; restart re-queues, kills leftovers.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, pidAlive, waitFor } from '../helpers/rq-root.js';
import { perTestRoot } from '../helpers/per-test-root.js';

const ctx = perTestRoot();

describe('kill -9 of the queue process', () => {
  it('with 3 scripts running: after restart no old script is alive, run/ is empty, all 3 are back in que', async () => {
    await addQueue(ctx.t.root, 'crash', { num_workers: 3 });
    ctx.q = await QueueProc.start(ctx.t.root, 'crash');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await ctx.q.send({ param1: 'forever' }));
    // Until a script has said its `run forever` line, a write to the fd 3 of a killed queue would end it (SIGPIPE).
    for (const id of ids)
      await waitFor(async () => /forever/.test((await ctx.q!.cmd('get_message_status', { msg_id: id }))[1]?.status ?? ''), `${id} to say run forever`);
    const pids = await Promise.all(ids.map(async (id) => Number(await fs.readFile(path.join(ctx.q!.paths.state.run, id, 'pid'), 'utf8'))));
    for (const p of pids) expect(pidAlive(p)).toBe(true);

    await ctx.q.kill9();
    // The scripts outlive the queue process (own process groups) until the restart deals with them.
    for (const p of pids) expect(pidAlive(p)).toBe(true);

    await fs.writeFile(path.join(ctx.t.root, 'config', 'crash.pause'), '');
    ctx.q = await QueueProc.start(ctx.t.root, 'crash');
    await waitFor(() => pids.every((p) => !pidAlive(p)), 'old scripts to be gone', 5000);
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([]);
    const n = await ctx.q.cmd('num_messages');
    expect(n).toMatchObject({ run: 0, que: 3 });
    for (const id of ids) {
      const history = (await fs.readFile(path.join(ctx.q.paths.state.que, id, 'history'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(history.at(-1)).toMatchObject({ from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' });
    }
  });

  it('SIGTERM stops scripts (no orphan) and the next start re-queues their messages', async () => {
    await addQueue(ctx.t.root, 'term', { num_workers: 2 });
    ctx.q = await QueueProc.start(ctx.t.root, 'term');
    const ids = [await ctx.q.send({ param1: 'forever' }), await ctx.q.send({ param1: 'forever' })];
    for (const id of ids) await ctx.q.waitState(id, ['run']);
    const pids = await Promise.all(ids.map(async (id) => Number(await fs.readFile(path.join(ctx.q!.paths.state.run, id, 'pid'), 'utf8'))));
    await ctx.q.stop();
    for (const p of pids) expect(pidAlive(p)).toBe(false);
    expect((await fs.readdir(ctx.q.paths.state.run)).sort()).toEqual([...ids].sort());
    await fs.writeFile(path.join(ctx.t.root, 'config', 'term.pause'), '');
    ctx.q = await QueueProc.start(ctx.t.root, 'term');
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ run: 0, que: 2 });
  });
});
