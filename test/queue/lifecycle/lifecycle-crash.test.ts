// The §B17 rows "timeout / stall: TERM sent" (each on its own) and "reschedule / priority: msg write": a real kill -9
// of the queue process at those points, then a restart, and the state the matrix promises.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { groupMembers, killLeftoverGroups, pidInFile } from '../../helpers/process-groups.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { historyOf } from '../../helpers/history.js';

const ctx = perTestRoot();
/** Script process groups a test saw; killed after it if a failure left them running. */
const groups = killLeftoverGroups();

describe('kill -9 after the timeout sent TERM, before the script was gone (§B17 "timeout / stall")', () => {
  it('the restart kills the old group and re-queues the message as interrupted; it runs again with a fresh timer', async () => {
    // A long grace: the script ignores TERM, so the queue dies while it waits to send KILL.
    await addQueue(ctx.t.root, 'term_crash', { extra: { timeout: 0.4, kill_grace: 60 } });
    ctx.q = await QueueProc.start(ctx.t.root, 'term_crash');
    const pidFile = path.join(ctx.t.root, 'stubborn.pid');
    const id = await ctx.q.send({ param1: 'stubborn', param2: pidFile });
    const oldPid = await pidInFile(pidFile);
    groups.push(oldPid);
    await waitFor(async () => (await historyOf(ctx.q!, id)).some((l) => l.event === 'timeout'), 'the timeout to fire');
    const runDir = path.join(ctx.q.paths.state.run, id);
    await waitFor(async () => (await fs.readFile(path.join(runDir, 'job', 'stdio.log'), 'utf8')).includes('got TERM'), 'the script to get TERM');
    await ctx.q.kill9();
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([id]);
    expect((await groupMembers(oldPid)).length).toBeGreaterThan(0);
    await fs.rm(pidFile);

    // The rerun gets a short grace, so its own timeout ends it quickly.
    await addQueue(ctx.t.root, 'term_crash', { extra: { timeout: 0.4, kill_grace: 0.2 } });
    ctx.q = await QueueProc.start(ctx.t.root, 'term_crash');
    const newPid = await pidInFile(pidFile);
    groups.push(newPid);
    expect(await groupMembers(oldPid)).toEqual([]);
    expect(newPid).not.toBe(oldPid);
    const m = await ctx.q.waitState(id, ['done', 'err']);
    expect(m.status).toMatch(/^err - TIMEOUT - killed after/);
    expect(m.last_failure).toMatchObject({ kind: 'timeout', signal: 'SIGKILL' });
    const h = await historyOf(ctx.q, id);
    const steps = h.map((l) => l.event ?? `${l.from}→${l.to}`);
    expect(steps).toEqual(['null→que', 'que→run', 'timeout', 'run→que', 'que→run', 'timeout', 'run→err']);
    expect(h[3]).toMatchObject({ actor: 'recovery', reason: 'interrupted' });
    // A crash is not a failure: the rerun is attempt 1 again, and only the rerun's end counts.
    expect(h[4]).toMatchObject({ attempt: 1, pid: newPid });
    expect(m.failures).toBe(1);
    expect(await groupMembers(newPid)).toEqual([]);
  });
});

describe('kill -9 after a heartbeat stall sent TERM, before the script was gone (§B17 "stall")', () => {
  it('the restart kills the old group and re-queues the message as interrupted; it runs again with a fresh heartbeat clock', async () => {
    // A long grace: the script ignores TERM, so the queue dies while it waits to send KILL.
    await addQueue(ctx.t.root, 'stall_crash', { extra: { kill_grace: 60 } });
    ctx.q = await QueueProc.start(ctx.t.root, 'stall_crash');
    const pidFile = path.join(ctx.t.root, 'stubborn.pid');
    const id = await ctx.q.send({ param1: 'stubborn', param2: pidFile, heartbeat_timeout: 1 });
    const oldPid = await pidInFile(pidFile);
    groups.push(oldPid);
    await waitFor(async () => (await historyOf(ctx.q!, id)).some((l) => l.event === 'stall'), 'the stall to fire');
    const runDir = path.join(ctx.q.paths.state.run, id);
    await waitFor(async () => (await fs.readFile(path.join(runDir, 'job', 'stdio.log'), 'utf8')).includes('got TERM'), 'the script to get TERM');
    await ctx.q.kill9();
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([id]);
    expect((await groupMembers(oldPid)).length).toBeGreaterThan(0);
    await fs.rm(pidFile);

    await addQueue(ctx.t.root, 'stall_crash', { extra: { kill_grace: 0.2 } });
    const restarted = Date.now();
    ctx.q = await QueueProc.start(ctx.t.root, 'stall_crash');
    const newPid = await pidInFile(pidFile);
    groups.push(newPid);
    expect(await groupMembers(oldPid)).toEqual([]);
    const m = await ctx.q.waitState(id, ['done', 'err']);
    // The rerun's clock starts at its own start: it is silent a full heartbeat_timeout before it stalls.
    expect(m.status).toMatch(/^err - STALLED - no progress for /);
    expect(Date.now() - restarted).toBeGreaterThanOrEqual(1000);
    const h = await historyOf(ctx.q, id);
    const steps = h.map((l) => l.event ?? `${l.from}→${l.to}`);
    expect(steps).toEqual(['null→que', 'que→run', 'stall', 'run→que', 'que→run', 'stall', 'run→err']);
    expect(h[3]).toMatchObject({ actor: 'recovery', reason: 'interrupted' });
    expect(h[4]).toMatchObject({ attempt: 1, pid: newPid });
    expect(m.failures).toBe(1);
    expect(m.last_failure).toMatchObject({ kind: 'stalled' });
  });
});

describe('kill -9 right after a reschedule or priority reply (§B17 "reschedule / priority: msg write")', () => {
  it('the restart loads the new due and priority, and runs the messages in the order they give', async () => {
    await addQueue(ctx.t.root, 'rekey_crash', { num_workers: 1 });
    ctx.q = await QueueProc.start(ctx.t.root, 'rekey_crash');
    const far = Math.floor(Date.now() / 1000) + 3600;
    const a = await ctx.q.send({ param1: 'done', due: far });
    const b = await ctx.q.send({ param1: 'done', due: far + 10 });
    const c = await ctx.q.send({ param1: 'done', due: far + 20 });
    const soon = far - 3000;
    expect(await ctx.q.cmd('reschedule_message', { msg_id: c, due: soon })).toEqual(['ok', soon]);
    expect(await ctx.q.cmd('set_priority', { msg_id: b, priority: -5 })).toEqual(['ok', -5]);
    await ctx.q.kill9();

    ctx.q = await QueueProc.start(ctx.t.root, 'rekey_crash');
    expect((await ctx.q.cmd('get_message', { msg_id: c }))[1]).toMatchObject({ due: soon, waiting: { reason: 'delayed', due: soon } });
    expect((await ctx.q.cmd('get_message', { msg_id: b }))[1]).toMatchObject({ priority: -5, due: far + 10 });
    // Delayed messages wait by due: c (rescheduled) first; b's priority counts once it is due.
    expect((await ctx.q.cmd('waiting'))[1].map((w: { msg_id: string }) => w.msg_id)).toEqual([c, a, b]);
    // Made due together on a paused queue, they start by priority, then due: b (-5), then a, then c.
    const pause = path.join(ctx.t.root, 'config', 'rekey_crash.pause');
    await fs.writeFile(pause, '');
    await waitFor(async () => (await ctx.q!.cmd('status'))[0] === 'PAUSE', 'PAUSE');
    for (const id of [a, c, b]) await ctx.q.cmd('reschedule_message', { msg_id: id, delay: 0 });
    await fs.rm(pause);
    for (const id of [a, b, c]) await ctx.q.waitState(id, ['done']);
    const started = await Promise.all([b, a, c].map(async (id) => Date.parse((await historyOf(ctx.q!, id)).find((l) => l.to === 'run')!.at)));
    expect([...started].sort((x, y) => x - y)).toEqual(started);
  });
});
