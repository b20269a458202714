// Crash recovery: kill -9 of the queue process while scripts run; restart re-queues, kills leftovers.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, pidAlive, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc | undefined;
beforeEach(async () => {
  t = await makeRoot();
});
afterEach(async () => {
  await q?.stop();
  await t.cleanup();
});

describe('kill -9 of the queue process', () => {
  it('with 3 scripts running: after restart no old script is alive, run/ is empty, all 3 are back in que', async () => {
    await addQueue(t.root, 'crash', { num_workers: 3 });
    q = await QueueProc.start(t.root, 'crash');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await q.send({ param1: 'forever' }));
    for (const id of ids) await q.waitState(id, ['run']);
    const pids = await Promise.all(ids.map(async (id) => Number(await fs.readFile(path.join(q!.paths.state.run, id, 'pid'), 'utf8'))));
    for (const p of pids) expect(pidAlive(p)).toBe(true);

    await q.kill9();
    // The scripts outlive the queue process (own process groups) until the restart deals with them.
    for (const p of pids) expect(pidAlive(p)).toBe(true);

    await fs.writeFile(path.join(t.root, 'config', 'crash.pause'), '');
    q = await QueueProc.start(t.root, 'crash');
    await waitFor(() => pids.every((p) => !pidAlive(p)), 'old scripts to be gone', 5000);
    expect(await fs.readdir(q.paths.state.run)).toEqual([]);
    const n = await q.cmd('num_messages');
    expect(n).toMatchObject({ run: 0, que: 3 });
    for (const id of ids) {
      const history = (await fs.readFile(path.join(q.paths.state.que, id, 'history'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      expect(history.at(-1)).toMatchObject({ from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' });
    }
  });

  it('SIGTERM stops scripts (no orphan) and the next start re-queues their messages', async () => {
    await addQueue(t.root, 'term', { num_workers: 2 });
    q = await QueueProc.start(t.root, 'term');
    const ids = [await q.send({ param1: 'forever' }), await q.send({ param1: 'forever' })];
    for (const id of ids) await q.waitState(id, ['run']);
    const pids = await Promise.all(ids.map(async (id) => Number(await fs.readFile(path.join(q!.paths.state.run, id, 'pid'), 'utf8'))));
    await q.stop();
    for (const p of pids) expect(pidAlive(p)).toBe(false);
    expect((await fs.readdir(q.paths.state.run)).sort()).toEqual([...ids].sort());
    await fs.writeFile(path.join(t.root, 'config', 'term.pause'), '');
    q = await QueueProc.start(t.root, 'term');
    expect(await q.cmd('num_messages')).toMatchObject({ run: 0, que: 2 });
  });
});
