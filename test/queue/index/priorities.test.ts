// Priorities (rq-beyond §B7) and the ready/delayed split of the que (§B2), on a real queue process.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';
import { seededRandom } from '../../helpers/seeded-random.mjs';

let t: TestRoot;
let q: QueueProc;
const pauseFile = () => path.join(t.root, 'config', 'pq.pause');

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'pq', { num_workers: 1 });
  q = await QueueProc.start(t.root, 'pq');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

/** The pid of a message's (only) run, from its stdio.log header: with one worker, pids grow in start order. */
async function pidOf(id: string): Promise<number> {
  const m = (await q.cmd('get_message', { msg_id: id }))[1];
  const log = await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
  return Number(/^\n?(\d+) - /.exec(log)![1]);
}

describe('priorities', () => {
  it('40 messages with random priorities on a paused queue start in (priority, due, arrival) order', async () => {
    const r = seededRandom();
    await fs.writeFile(pauseFile(), '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'PAUSE', 'PAUSE');
    const sent: { id: string; priority: number; n: number }[] = [];
    for (let n = 0; n < 40; n++) {
      const priority = r.int(5) - 2;
      sent.push({ id: await q.send({ param1: 'done', priority }), priority, n });
    }
    expect(
      (await q.cmd('messages', { state: 'que', limit: 100 })).map((e: [string]) => e[0]),
      r.replay,
    ).toEqual([...sent].sort((a, b) => a.priority - b.priority || a.n - b.n).map((s) => s.id));
    await fs.rm(pauseFile());
    await Promise.all(sent.map((s) => q.waitState(s.id, ['done'], 20_000)));
    const pids = await Promise.all(sent.map((s) => pidOf(s.id)));
    const byStart = sent
      .map((s, i) => ({ id: s.id, pid: pids[i] }))
      .sort((a, b) => a.pid - b.pid)
      .map((x) => x.id);
    expect(byStart, r.replay).toEqual([...sent].sort((a, b) => a.priority - b.priority || a.n - b.n).map((s) => s.id));
  });

  it('an urgent message due later does not hold back a due one; run_now puts a message first, priority included', async () => {
    await fs.writeFile(pauseFile(), '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'PAUSE', 'PAUSE');
    const later = await q.send({ param1: 'done', priority: -10, due: Math.floor(Date.now() / 1000) + 3600 });
    const low = await q.send({ param1: 'done', priority: 5 });
    const normal = await q.send({ param1: 'done' });
    const urgent = await q.send({ param1: 'done', priority: -3 });
    expect((await q.cmd('messages', { state: 'que' })).map((e: [string]) => e[0])).toEqual([urgent, normal, low, later]);
    expect(await q.cmd('run_message', { msg_id: low })).toEqual(['ok', 'msg sent to front of run queue']);
    expect((await q.cmd('get_message', { msg_id: low }))[1].priority).toBe(-3);
    expect((await q.cmd('messages', { state: 'que' })).map((e: [string]) => e[0])).toEqual([low, urgent, normal, later]);
    await fs.rm(pauseFile());
    await Promise.all([low, urgent, normal].map((id) => q.waitState(id, ['done'])));
    expect(await q.state(later)).toBe('que');
    const pids = await Promise.all([low, urgent, normal].map(pidOf));
    expect([...pids].sort((a, b) => a - b)).toEqual(pids);
    await q.cmd('cancel_message', { msg_id: later });
  });

  it('set_priority re-keys a queued message durably and tells the script; refuses a running or finished one', async () => {
    const id = await q.send({ param1: 'env', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(await q.cmd('set_priority', { msg_id: id, priority: -7 })).toEqual(['ok', -7]);
    const m = (await q.cmd('get_message', { msg_id: id }))[1];
    expect(JSON.parse(await fs.readFile(path.join(t.root, m.path, 'msg'), 'utf8')).priority).toBe(-7);
    expect(await q.cmd('set_priority', { msg_id: id, priority: 'high' })).toEqual([
      'fail',
      'priority: expected a whole number from -1000000 to 1000000, received "high"',
    ]);
    await q.cmd('run_message', { msg_id: id });
    const done = await q.waitState(id, ['done']);
    expect(await fs.readFile(path.join(t.root, done.path, 'job', 'stdio.log'), 'utf8')).toMatch(/^RQ_PRIORITY=-7$/m);
    expect(await q.cmd('set_priority', { msg_id: id, priority: 1 })).toEqual(['fail', 'msg not in que or prep (done)']);
  });

  it('a message without priority gets no RQ_PRIORITY and no priority field', async () => {
    const m = await q.waitState(await q.send({ param1: 'env' }), ['done']);
    expect(m).not.toHaveProperty('priority');
    expect(await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8')).not.toMatch(/^RQ_PRIORITY=/m);
  });
});
