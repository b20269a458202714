// Cancel (plain and with purge) and requeue across a crash of the queue process (rq-beyond §B5
// "Crash", §B6 "Crash", §B17 rows "cancel (que)", "cancel (run)", "requeue"): a real SIGKILL right
// after `ok msg cancelling` while the script ignores TERM, and the on-disk states a kill leaves
// between a decision's `msg` write and its rename or removal, produced by hand while the queue is stopped.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { groupMembers, killLeftoverGroups, pidInFile } from '../../helpers/process-groups.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { historyFile } from '../../helpers/history.js';

const ctx = perTestRoot();
/** Script process groups a test saw; killed after it if a failure left them running. */
const groups = killLeftoverGroups();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;

const nowS = () => Math.floor(Date.now() / 1000);

const history = (m: { path: string }): Promise<Line[]> => historyFile(path.join(ctx.t.root, m.path));

const moves = (h: Line[]): string[] => h.filter((l) => l.from !== undefined).map((l) => `${l.from}→${l.to}`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function getMessage(q: QueueProc, id: string): Promise<any> {
  const r = await q.cmd('get_message', { msg_id: id });
  if (r[0] !== 'ok') throw new Error(`get_message ${id}: ${JSON.stringify(r)}`);
  return r[1];
}

const exists = (p: string) =>
  fs.access(p).then(
    () => true,
    () => false,
  );

/** Every entry left in the queue's state dirs (recursively, so hashed done/ and acked `.id` names count), prep's `_` temps aside. */
async function spoolEntries(q: QueueProc): Promise<string[]> {
  const out: string[] = [];
  for (const [state, dir] of Object.entries(q.paths.state)) {
    for (const n of await fs.readdir(dir, { recursive: true })) if (!(state === 'prep' && n.startsWith('_'))) out.push(`${state}/${n}`);
  }
  return out;
}

/** How many times a script started for this message: RQ START headers in its job/stdio.log (made empty at create). */
async function starts(m: { path: string }): Promise<number> {
  return ((await fs.readFile(path.join(ctx.t.root, m.path, 'job', 'stdio.log'), 'utf8')).match(/ - RQ START - /g) ?? []).length;
}

/**
 * A TERM-ignoring script cancelled (with `extra` fields), then the queue killed right after
 * `ok msg cancelling`: kill_grace 30 means the queue dies long before it would send KILL. Returns
 * what the kill left once the script has logged the TERM it ignored.
 */
async function cancelThenKill(queue: string, cancel: Record<string, unknown>): Promise<{ id: string; pid: number; pidFile: string; runDir: string }> {
  await addQueue(ctx.t.root, queue, { extra: { kill_grace: 30 } });
  ctx.q = await QueueProc.start(ctx.t.root, queue);
  const pidFile = path.join(ctx.t.root, 'stubborn.pid');
  const id = await ctx.q.send({ param1: 'stubborn', param2: pidFile, max_retries: 5 });
  const pid = await pidInFile(pidFile);
  groups.push(pid);
  const runDir = path.join(ctx.q.paths.state.run, id);
  // The queue records the group in run/<id>/pid; the restart finds the leftover group through it.
  await waitFor(async () => Number((await fs.readFile(path.join(runDir, 'pid'), 'utf8').catch(() => '')).trim()) === pid, 'run/<id>/pid');
  expect(await ctx.q.cmd('cancel_message', { msg_id: id, ...cancel })).toEqual(['ok', 'msg cancelling']);
  await ctx.q.kill9();
  expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([id]);
  await waitFor(async () => (await fs.readFile(path.join(runDir, 'job', 'stdio.log'), 'utf8')).includes('got TERM'), 'the script to log the TERM it ignored');
  expect(await groupMembers(pid)).toContain(pid);
  await fs.rm(pidFile);
  return { id, pid, pidFile, runDir };
}

describe('kill -9 right after `ok msg cancelling` (§B5 crash "run: after the cancel marker")', () => {
  it('the restart kills the TERM-ignoring script group and finishes the message to err cancelled; the script never runs again', async () => {
    const { id, pid, pidFile, runDir } = await cancelThenKill('cancel_run', { reason: 'operator stop', actor: 'cli:alice' });
    // What the kill left: still in run/, the durable marker, and a script that shrugged off TERM.
    expect(JSON.parse(await fs.readFile(path.join(runDir, 'cancel'), 'utf8'))).toMatchObject({ by: 'cli:alice', reason: 'operator stop' });

    ctx.q = await QueueProc.start(ctx.t.root, 'cancel_run');
    // Once the restarted queue answers, nothing of the old group is alive.
    expect(await groupMembers(pid)).toEqual([]);
    expect(await fs.readdir(ctx.q.paths.state.run)).toEqual([]);
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ prep: 0, que: 0, run: 0, err: 1, done: 0 });
    const m = await getMessage(ctx.q, id);
    expect(m).toMatchObject({
      state: 'err',
      outcome: 'cancelled',
      status: 'err - CANCELLED - operator stop',
      cancel: { by: 'cli:alice', reason: 'operator stop' },
    });
    // A cancel is not a failure, and max_retries 5 does not bring it back.
    expect(m.failures).toBeUndefined();
    expect(m.interrupts).toBeUndefined();
    const h = await history(m);
    expect(moves(h)).toEqual(['que→run', 'run→err']);
    expect(h.filter((l) => l.event).map((l) => l.event)).toEqual(['cancel_requested']);
    expect(h.at(-1)).toMatchObject({ from: 'run', to: 'err', actor: 'recovery', outcome: 'cancelled', reason: 'CANCELLED - operator stop' });
    // The script ran once: one RQ START header, and no fresh pid file.
    expect(await starts(m)).toBe(1);
    expect(await exists(pidFile)).toBe(false);
    // And it stays that way: a finished message is refused, not cancelled twice.
    expect(await ctx.q.cmd('cancel_message', { msg_id: id })).toEqual(['fail', 'msg already finished (err)']);
  });
});

describe('kill -9 right after `ok msg cancelling` of a purge (§B5 purge, crash "run: after the cancel marker")', () => {
  it('the restart kills the TERM-ignoring group and removes the message instead of keeping it in err; the script never runs again', async () => {
    const { id, pid, pidFile, runDir } = await cancelThenKill('purge_run', { reason: 'drop it', actor: 'cli:alice', purge: true });
    // The purge must survive the kill in the marker itself: nothing else on disk says "remove".
    expect(JSON.parse(await fs.readFile(path.join(runDir, 'cancel'), 'utf8'))).toMatchObject({ by: 'cli:alice', reason: 'drop it', purge: true });

    ctx.q = await QueueProc.start(ctx.t.root, 'purge_run');
    expect(await groupMembers(pid)).toEqual([]);
    // Gone from every state dir, err/ included (not even acknowledged there), and from the counts.
    expect(await spoolEntries(ctx.q)).toEqual([]);
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ prep: 0, que: 0, run: 0, err: 0, done: 0 });
    expect(await ctx.q.cmd('get_message', { msg_id: id })).toEqual(['fail', 'msg not found']);
    expect(await ctx.q.cmd('cancel_message', { msg_id: id, purge: true })).toEqual(['fail', 'msg not found']);
    // max_retries 5 did not bring it back: no fresh pid file from a second start.
    expect(await exists(pidFile)).toBe(false);
  });
});

describe('kill -9 after the msg write, before the rename (§B17 "cancel (que)", §B1.3)', () => {
  it('a que and a prep message whose msg already says cancelled are finished to err at load and never run', async () => {
    await addQueue(ctx.t.root, 'cancel_que');
    ctx.q = await QueueProc.start(ctx.t.root, 'cancel_que');
    const queId = await ctx.q.send({ param1: 'done', due: nowS() + 3600 });
    const prep = await ctx.q.cmd('prep_message', { dest: 'cancel_que', param1: 'done' });
    const prepId = String(prep[1]).split('/').pop()!;
    expect(await ctx.q.state(queId)).toBe('que');
    expect(await ctx.q.state(prepId)).toBe('prep');
    await ctx.q.stop();

    // What finishToErr makes durable before its rename: the status text, then msg with outcome and cancel.
    const cancel = { at: new Date().toISOString(), by: 'cli:alice', reason: 'crash test' };
    for (const [state, id] of [
      ['que', queId],
      ['prep', prepId],
    ] as const) {
      const dir = path.join(ctx.q.paths.state[state], id);
      const msg = JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'));
      expect(msg.outcome).toBeUndefined();
      // Due long ago: were it loaded into the que, it would start at once.
      await fs.writeFile(path.join(dir, 'msg'), JSON.stringify({ ...msg, due: nowS() - 60, outcome: 'cancelled', cancel }));
      await fs.writeFile(path.join(dir, 'status'), JSON.stringify({ job_status: 'CANCELLED - crash test' }));
    }

    ctx.q = await QueueProc.start(ctx.t.root, 'cancel_que');
    expect(await fs.readdir(ctx.q.paths.state.que)).toEqual([]);
    expect((await fs.readdir(ctx.q.paths.state.prep)).filter((n) => !n.startsWith('_'))).toEqual([]);
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ prep: 0, que: 0, run: 0, err: 2, done: 0 });
    expect(await ctx.q.cmd('messages', { state: 'que' })).toEqual([]);
    for (const [from, id] of [
      ['que', queId],
      ['prep', prepId],
    ] as const) {
      const m = await getMessage(ctx.q, id);
      expect(m).toMatchObject({ state: 'err', outcome: 'cancelled', status: 'err - CANCELLED - crash test', cancel });
      const h = await history(m);
      expect(moves(h)).toEqual([`${from}→err`]);
      expect(h.at(-1)).toMatchObject({ from, to: 'err', actor: 'recovery' });
      expect(await starts(m)).toBe(0);
    }
    // Finished for good: another cancel is refused; requeue is the way back.
    expect(await ctx.q.cmd('cancel_message', { msg_id: queId })).toEqual(['fail', 'msg already finished (err)']);
  });
});

describe('kill -9 in a purge after the msg write, before the removal (§B5 purge, §B1.3)', () => {
  it('a que and a prep message whose msg says cancelled with purge are removed at load, never run, and the err count stays 0', async () => {
    await addQueue(ctx.t.root, 'purge_que');
    ctx.q = await QueueProc.start(ctx.t.root, 'purge_que');
    const queId = await ctx.q.send({ param1: 'done', due: nowS() + 3600 });
    const prep = await ctx.q.cmd('prep_message', { dest: 'purge_que', param1: 'done' });
    const prepId = String(prep[1]).split('/').pop()!;
    expect(await ctx.q.state(queId)).toBe('que');
    expect(await ctx.q.state(prepId)).toBe('prep');
    await ctx.q.stop();

    // What finishToErr with `purge` makes durable before its removal: the status text, then msg with outcome and cancel.purge.
    const cancel = { at: new Date().toISOString(), by: 'cli:alice', reason: 'crash test', purge: true };
    for (const [state, id] of [
      ['que', queId],
      ['prep', prepId],
    ] as const) {
      const dir = path.join(ctx.q.paths.state[state], id);
      const msg = JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'));
      // Due long ago: were it loaded into the que, it would start at once.
      await fs.writeFile(path.join(dir, 'msg'), JSON.stringify({ ...msg, due: nowS() - 60, outcome: 'cancelled', cancel }));
      await fs.writeFile(path.join(dir, 'status'), JSON.stringify({ job_status: 'CANCELLED - crash test' }));
    }

    ctx.q = await QueueProc.start(ctx.t.root, 'purge_que');
    expect(await spoolEntries(ctx.q)).toEqual([]);
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ prep: 0, que: 0, run: 0, err: 0, done: 0 });
    expect(await ctx.q.cmd('messages', { state: 'err' })).toEqual([]);
    for (const id of [queId, prepId]) expect(await ctx.q.cmd('get_message', { msg_id: id })).toEqual(['fail', 'msg not found']);
  });
});

describe('kill -9 in a requeue after the msg write, before the rename (§B6 "Crash", §B17 "requeue")', () => {
  it('the message is a plain err after the restart (no outcome), nothing runs, and the repeated requeue runs it once', async () => {
    await addQueue(ctx.t.root, 'requeue_crash');
    ctx.q = await QueueProc.start(ctx.t.root, 'requeue_crash');
    const id = await ctx.q.send({ param1: 'done', due: nowS() + 3600 });
    expect(await ctx.q.cmd('cancel_message', { msg_id: id, reason: 'paused work' })).toEqual(['ok', 'msg cancelled']);
    expect(await getMessage(ctx.q, id)).toMatchObject({ state: 'err', outcome: 'cancelled' });
    await ctx.q.stop();

    // What requeue makes durable in err/ before its rename: outcome and cancel cleared, due now.
    const dir = path.join(ctx.q.paths.state.err, id);
    const msg = JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'));
    expect(msg).toMatchObject({ outcome: 'cancelled', cancel: { reason: 'paused work' } });
    delete msg.outcome;
    delete msg.cancel;
    await fs.writeFile(path.join(dir, 'msg'), JSON.stringify({ ...msg, due: nowS() }));

    ctx.q = await QueueProc.start(ctx.t.root, 'requeue_crash');
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1, done: 0 });
    const m = await getMessage(ctx.q, id);
    expect(m.state).toBe('err');
    expect(m.outcome).toBeUndefined();
    expect(m.cancel).toBeUndefined();
    expect(moves(await history(m))).toEqual(['que→err']);
    expect(await starts(m)).toBe(0);

    // The operator repeats the requeue: it runs once and ends done.
    expect(await ctx.q.cmd('requeue_message', { msg_id: id, actor: 'cli:bob' })).toEqual(['ok', 'msg requeued']);
    const done = await ctx.q.waitState(id, ['done', 'err']);
    expect(done).toMatchObject({ state: 'done', status: 'done - done sleeping' });
    expect(done.outcome).toBeUndefined();
    const h = await history(done);
    expect(moves(h)).toEqual(['que→err', 'err→que', 'que→run', 'run→done']);
    expect(h.find((l) => l.from === 'err')).toMatchObject({ to: 'que', actor: 'cli:bob' });
    expect(await starts(done)).toBe(1);
    expect(await ctx.q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 0, done: 1 });
  });
});
