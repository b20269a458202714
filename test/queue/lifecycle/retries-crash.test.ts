// Retries and run clocks across a kill -9 of the queue process (rq-beyond §B3.5, §B1.3, §B10, §B17):
// the on-disk states a crash leaves between a decision's `msg` write and its rename, produced for
// real, and real SIGKILLs while a script runs or a retry waits in the que.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, pidAlive, waitFor } from '../../helpers/rq-root.js';
import { groupMembers, killLeftoverGroups, pidInFile } from '../../helpers/process-groups.js';
import { perTestRoot } from '../../helpers/per-test-root.js';

const ctx = perTestRoot();
/** Script process groups a test saw; killed after it if a failure left them running. */
const groups = killLeftoverGroups();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;
const FLAKY_30S = { param1: 'flaky', param2: '99', max_retries: 3, backoff_base: 30, min_retry_delay: 0, retry_jitter: 0 };

async function history(m: { path: string }): Promise<Line[]> {
  const text = await fs.readFile(path.join(ctx.t.root, m.path, 'history'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

const moves = (h: Line[]): string[] => h.filter((l) => l.from !== undefined).map((l) => `${l.from}→${l.to}`);

async function stdio(m: { path: string }): Promise<string> {
  return fs.readFile(path.join(ctx.t.root, m.path, 'job', 'stdio.log'), 'utf8');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function getMessage(q: QueueProc, id: string): Promise<any> {
  const r = await q.cmd('get_message', { msg_id: id });
  if (r[0] !== 'ok') throw new Error(`get_message ${id}: ${JSON.stringify(r)}`);
  return r[1];
}

/** Waits until get_message shows the message back in que after its `failures`-th retry decision. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function waitRetried(q: QueueProc, id: string, failures: number, timeoutMs = 10_000): Promise<any> {
  return waitFor(
    async () => {
      const m = await getMessage(q, id);
      return m.state === 'que' && m.failures === failures ? m : undefined;
    },
    `${id} back in que with failures ${failures}`,
    timeoutMs,
  );
}

describe('kill -9 around a retry decision (§B3.5)', () => {
  it("killed after the retry decision's msg write, before the rename: re-queued with its failures and due, the retry happens as decided", async () => {
    await addQueue(ctx.t.root, 'retry_msg');
    ctx.q = await QueueProc.start(ctx.t.root, 'retry_msg');
    const id = await ctx.q.send(FLAKY_30S);
    const decided = await waitRetried(ctx.q, id, 1);
    expect(decided.due * 1000 - Date.now()).toBeGreaterThan(25_000);
    await ctx.q.kill9();

    // The rename undone: run/<id> with the decided msg (failures 1, due 30 s ahead) and status.
    const { que, run } = ctx.q.paths.state;
    const onDisk = JSON.parse(await fs.readFile(path.join(que, id, 'msg'), 'utf8'));
    expect(onDisk).toMatchObject({ failures: 1, due: decided.due, last_failure: { kind: 'err', text: 'attempt 1 failed' } });
    await fs.rename(path.join(que, id), path.join(run, id));

    ctx.q = await QueueProc.start(ctx.t.root, 'retry_msg');
    expect(await fs.readdir(run)).toEqual([]);
    expect(await ctx.q.state(id)).toBe('que');
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ que: 1, run: 0, err: 0, done: 0 });
    const m = await getMessage(ctx.q, id);
    expect(m).toMatchObject({ state: 'que', failures: 1, due: decided.due });
    expect(m.outcome).toBeUndefined();
    expect(m.due * 1000 - Date.now()).toBeGreaterThan(20_000);
    expect(m.status).toBe('que - RETRY 1/3 IN 30s - attempt 1 failed');
    const h = await history(m);
    expect(moves(h)).toEqual(['que→run', 'run→que', 'run→que']);
    expect(h.filter((l) => l.from !== undefined).at(-1)).toMatchObject({ from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' });
    // Not due: nothing starts it on its own.
    expect(await fs.readFile(path.join(ctx.t.root, m.path, 'job', 'stdio.log'), 'utf8')).not.toContain('attempt=2');

    // Run now: the next run is attempt 2 (failures 1 survived), which fails and is retried as the 2nd.
    expect(await ctx.q.cmd('run_message', { msg_id: id })).toEqual(['ok', 'msg sent to front of run queue']);
    const after = await waitRetried(ctx.q, id, 2);
    expect((await stdio(after)).match(/attempt=\d+ max=\d+ last=.*/g)).toEqual(['attempt=1 max=3 last=', 'attempt=2 max=3 last=attempt 1 failed']);
    expect(after.last_failure).toMatchObject({ kind: 'err', text: 'attempt 2 failed' });
    expect(moves(await history(after))).toEqual(['que→run', 'run→que', 'run→que', 'que→run', 'run→que']);
  });

  it("killed after the exhausted decision's msg write (outcome present), before the rename: finished to err at load, never run again", async () => {
    await addQueue(ctx.t.root, 'exhaust_msg');
    ctx.q = await QueueProc.start(ctx.t.root, 'exhaust_msg');
    const id = await ctx.q.send({ param1: 'retry', param2: '-upstream busy', max_retries: 0 });
    const finished = await ctx.q.waitState(id, ['err', 'done', 'que']);
    expect(finished).toMatchObject({ state: 'err', outcome: 'exhausted', failures: 1, status: 'err - RETRIES EXHAUSTED (0) - upstream busy' });
    await ctx.q.stop();

    // The rename undone: run/<id> (flat) holding the msg with its outcome and the final status.
    const errDir = path.join(ctx.t.root, finished.path);
    const statusFile = path.join(errDir, 'status');
    const statusBefore = await fs.readFile(statusFile, 'utf8');
    const statusMtime = (await fs.stat(statusFile)).mtimeMs;
    const msgBefore = JSON.parse(await fs.readFile(path.join(errDir, 'msg'), 'utf8'));
    expect(msgBefore).toMatchObject({ outcome: 'exhausted', failures: 1 });
    const linesBefore = (await history(finished)).length;
    await fs.rename(errDir, path.join(ctx.q.paths.state.run, id));

    ctx.q = await QueueProc.start(ctx.t.root, 'exhaust_msg');
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([]);
    expect(await fs.readdir(ctx.q.paths.state.que)).toEqual([]);
    expect(await ctx.q.state(id)).toBe('err');
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1 });
    const m = await getMessage(ctx.q, id);
    expect(m).toMatchObject({
      state: 'err',
      outcome: 'exhausted',
      failures: 1,
      last_failure: msgBefore.last_failure,
      status: 'err - RETRIES EXHAUSTED (0) - upstream busy',
    });
    const statusPath = path.join(ctx.t.root, m.path, 'status');
    expect(await fs.readFile(statusPath, 'utf8')).toBe(statusBefore);
    expect((await fs.stat(statusPath)).mtimeMs).toBe(statusMtime);
    const h = await history(m);
    const since = h.slice(linesBefore);
    expect(since.map((l) => `${l.from}→${l.to}:${l.actor}`)).toEqual(['run→que:recovery', 'que→err:recovery']);
    expect(since[1].reason).toBe('outcome exhausted decided before a crash');
    expect(moves(h).filter((x) => x === 'que→run')).toHaveLength(1);
    // Still err once the dispatcher has had its chance: recovery finished it, it is not indexed.
    await ctx.q.cmd('messages', { state: 'que' }).then((r) => expect(r).toEqual([]));
    expect(moves(await history(m)).filter((x) => x === 'que→run')).toHaveLength(1);
  });
});

describe('kill -9 while a script runs under a timeout (§B10, §B17)', () => {
  it('the restart kills the old group, re-runs the message with a fresh timer, and it times out to err; never two scripts at once', async () => {
    await addQueue(ctx.t.root, 'timed_crash', { extra: { timeout: 1.5, kill_grace: 0.2 } });
    ctx.q = await QueueProc.start(ctx.t.root, 'timed_crash');
    const pidFile = path.join(ctx.t.root, 'forever.pid');
    const id = await ctx.q.send({ param1: 'forever', param2: pidFile });
    const oldPid = await pidInFile(pidFile);
    groups.push(oldPid);
    await ctx.q.kill9();
    // Killed before its timeout: the message is still in run/ and the group outlives the queue.
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([id]);
    // bash and its `sleep 1000` (started just after the pid file is written).
    await waitFor(async () => (await groupMembers(oldPid)).length >= 2, `group ${oldPid} to hold bash and sleep`);
    expect(pidAlive(oldPid)).toBe(true);
    await fs.rm(pidFile);

    const restartedAt = Date.now();
    ctx.q = await QueueProc.start(ctx.t.root, 'timed_crash');
    const newPid = await pidInFile(pidFile);
    groups.push(newPid);
    // The moment the rerun exists, nothing of the old run is alive.
    expect(await groupMembers(oldPid)).toEqual([]);
    expect(newPid).not.toBe(oldPid);

    const m = await ctx.q.waitState(id, ['done', 'err'], 10_000);
    expect(m.status).toMatch(/^err - TIMEOUT - killed after \d+(\.\d+)?s \(timeout 1\.5s\)$/);
    expect(m.outcome).toBe('failed');
    expect(m.last_failure).toMatchObject({ kind: 'timeout' });
    expect(await groupMembers(newPid)).toEqual([]);
    const h = await history(m);
    expect(moves(h)).toEqual(['que→run', 'run→que', 'que→run', 'run→err']);
    const recovery = h.find((l) => l.actor === 'recovery');
    expect(recovery).toMatchObject({ from: 'run', to: 'que', reason: 'interrupted' });
    // One timeout, fired by the rerun's own timer: 1.5 s after the rerun started, not after the first run.
    const timeouts = h.filter((l) => l.event === 'timeout');
    expect(timeouts).toHaveLength(1);
    const rerun = h.filter((l) => l.from === 'que' && l.to === 'run')[1];
    expect(h.indexOf(timeouts[0])).toBeGreaterThan(h.indexOf(rerun));
    expect(Date.parse(rerun.at)).toBeGreaterThanOrEqual(restartedAt - 5);
    expect(timeouts[0].after_s).toBeGreaterThanOrEqual(1.5);
    // The clock that fired started after the restart: its start is the line's time less the time it
    // counted (the line comes just after the firing, so this is at or after that start). A clock carried
    // over from the first run started before the kill. No bound on how long the rerun's start took.
    expect(Date.parse(timeouts[0].at) - timeouts[0].after_s * 1000).toBeGreaterThanOrEqual(restartedAt - 5);
  });
});

describe('kill -9 while a retry waits in the que (§B3.5 "after the rename")', () => {
  it('the pending retry runs exactly once more after the restart and ends done with failures 1', async () => {
    await addQueue(ctx.t.root, 'pending');
    ctx.q = await QueueProc.start(ctx.t.root, 'pending');
    const id = await ctx.q.send({ param1: 'flaky', param2: '2', max_retries: 2, backoff_base: 0.5, min_retry_delay: 0, retry_jitter: 0 });
    const decided = await waitRetried(ctx.q, id, 1);
    await ctx.q.kill9();
    // The kill came while the retry waited: in que/ on disk, one run so far.
    const queDir = path.join(ctx.q.paths.state.que, id);
    expect(JSON.parse(await fs.readFile(path.join(queDir, 'msg'), 'utf8'))).toMatchObject({ failures: 1, due: decided.due });
    expect(moves(await history({ path: path.relative(ctx.t.root, queDir) }))).toEqual(['que→run', 'run→que']);

    ctx.q = await QueueProc.start(ctx.t.root, 'pending');
    const m = await ctx.q.waitState(id, ['done', 'err']);
    expect(m).toMatchObject({ state: 'done', status: 'done - on attempt 2', failures: 1 });
    expect((await stdio(m)).match(/attempt=\d+/g)).toEqual(['attempt=1', 'attempt=2']);
    const h = await history(m);
    expect(moves(h)).toEqual(['que→run', 'run→que', 'que→run', 'run→done']);
    // Not started before its due.
    expect(Date.parse(h.filter((l) => l.from === 'que' && l.to === 'run')[1].at)).toBeGreaterThanOrEqual(Math.floor(decided.due * 1000));
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, done: 1, err: 0 });
  });
});
