// A real SIGKILL of the queue process between a decision's `msg` write and its rename (rq-beyond §B3.5, §B17 rows "retry decision", "exhaustion", "fatal", "expiry", "cancel (que)", "requeue"): the process is frozen at the rename by test/helpers/hold-point.mjs, killed there, restarted, and the message must be where the spec says.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CrashPoint, holdAtRename, killFrozenAfterEach } from '../../helpers/crash-point.js';
import { historyFile } from '../../helpers/history.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { killLeftoverGroups } from '../../helpers/process-groups.js';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';

const ctx = perTestRoot();
killLeftoverGroups();
/** A queue process frozen at its rename answers nothing, not even a stop: one a failed test left there is killed first. */
const frozen = killFrozenAfterEach(ctx);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const moves = (h: Json[]): string[] => h.filter((l) => l.from !== undefined).map((l) => `${l.from}→${l.to}:${l.actor}`);

async function getMessage(q: QueueProc, id: string): Promise<Json> {
  const r = await q.cmd('get_message', { msg_id: id });
  if (r[0] !== 'ok') throw new Error(`get_message ${id}: ${JSON.stringify(r)}`);
  return r[1];
}

/** The msg file of `id` in a flat state directory, as the frozen process left it. */
async function msgOnDisk(q: QueueProc, state: 'prep' | 'que' | 'run' | 'err', id: string): Promise<Json> {
  return JSON.parse(await fs.readFile(path.join(q.paths.state[state], id, 'msg'), 'utf8'));
}

/** How many times a script started for the message (RQ START headers in its log). */
async function starts(m: Json): Promise<number> {
  const log = await fs.readFile(path.join(ctx.t.root, m.path, 'job', 'stdio.log'), 'utf8').catch(() => '');
  return (log.match(/ - RQ START - /g) ?? []).length;
}

/** Starts queue `name` frozen at the first rename `rule` names. */
async function startHeld(name: string, rule: Parameters<typeof holdAtRename>[1], extra: Json = {}): Promise<CrashPoint> {
  await addQueue(ctx.t.root, name, { extra });
  const point = await holdAtRename(ctx.t.root, rule);
  ctx.q = await QueueProc.start(ctx.t.root, name, { env: point.env });
  frozen(ctx.q);
  return point;
}

/** SIGKILL of the frozen process, then a plain start of the same queue. */
async function killAndRestart(name: string): Promise<QueueProc> {
  await ctx.q!.kill9();
  ctx.q = await QueueProc.start(ctx.t.root, name);
  return ctx.q;
}

/**
 * Sends a message to the held queue and returns its id from the held path (`run/<id>`, or a file in
 * it). The create's `ok` is not awaited: a script that fails at once can bring the queue to the hold
 * before the `ok` is written, and a frozen queue never sends it. An `ok` that did come names the same id.
 */
async function sendHeld(point: CrashPoint, fields: Json): Promise<string> {
  const reply = ctx.q!.send(fields).catch(() => null);
  const at = await point.reached();
  const id = /\/run\/([^/]+)/.exec(at.from ?? '')?.[1];
  if (!id) throw new Error(`the hold is not in run/: ${JSON.stringify(at)}`);
  const acked = await Promise.race([reply, new Promise<null>((r) => setImmediate(() => r(null)))]);
  if (acked !== null) expect(acked).toBe(id);
  return id;
}

/** Whether a command's outcome (its reply, or the error of a connection the kill closed) was an ok. */
const okReply = (r: unknown): boolean => Array.isArray(r) && r[0] === 'ok';

const nowS = () => Math.floor(Date.now() / 1000);
const RUN = /\/run\/[^/]+$/;

describe("kill -9 after a failed run, before its retry decision's msg write (§B3.5 row 1)", () => {
  it('the restart re-queues it from run/ as interrupted with its failures unchanged: the failed attempt runs again as attempt 1', async () => {
    const point = await startHeld('retry_unwritten', { from: /\/run\/[^/]+\/msg\.tmp$/, to: /\/run\/[^/]+\/msg$/, when: 'before' }, { max_interrupts: 5 });
    const id = await sendHeld(point, { param1: 'flaky', param2: '99', max_retries: 3, backoff_base: 30, min_retry_delay: 0, retry_jitter: 0 });
    // The script has exited and its failure is decided, but msg still says no failure.
    expect((await msgOnDisk(ctx.q!, 'run', id)).failures).toBeUndefined();

    const q = await killAndRestart('retry_unwritten');
    // Due at once: it runs again, as the same attempt (the budget allows one more run than it counts).
    const after = await waitFor(
      async () => {
        const now = await getMessage(q, id);
        return now.failures === 1 && now.state === 'que' ? now : undefined;
      },
      'the rerun to fail and be retried',
      20_000,
    );
    expect(after).toMatchObject({ state: 'que', failures: 1, interrupts: 1 });
    const log = await fs.readFile(path.join(ctx.t.root, after.path, 'job', 'stdio.log'), 'utf8');
    expect(log.match(/attempt=\d+ max=\d+/g)).toEqual(['attempt=1 max=3', 'attempt=1 max=3']);
    expect(moves(await historyFile(path.join(ctx.t.root, after.path)))).toEqual([
      'que→run:dispatcher',
      'run→que:recovery',
      'que→run:dispatcher',
      'run→que:retry',
    ]);
  });
});

describe('kill -9 between a retry decision\'s msg write and its rename run → que (§B3.5 row 2, §B17 "retry decision")', () => {
  it('the restart re-queues it with the decided failures and due: not run before that due, and its next run is attempt 2', async () => {
    const point = await startHeld('retry_held', { from: RUN, to: /\/que\/[^/]+$/, when: 'before' });
    const id = await sendHeld(point, { param1: 'flaky', param2: '99', max_retries: 3, backoff_base: 30, min_retry_delay: 0, retry_jitter: 0 });
    expect(await point.reached()).toEqual({ from: path.join(ctx.q!.paths.state.run, id), to: path.join(ctx.q!.paths.state.que, id) });
    const decided = await msgOnDisk(ctx.q!, 'run', id);
    expect(decided).toMatchObject({ failures: 1, last_failure: { kind: 'err', text: 'attempt 1 failed' } });
    expect(decided.due - nowS()).toBeGreaterThan(20);

    const q = await killAndRestart('retry_held');
    expect(await fs.readdir(q.paths.state.run)).toEqual([]);
    const m = await getMessage(q, id);
    expect(m).toMatchObject({ state: 'que', failures: 1, due: decided.due, status: 'que - RETRY 1/3 IN 30s - attempt 1 failed' });
    expect(m.outcome).toBeUndefined();
    expect(moves(await historyFile(path.join(ctx.t.root, m.path))).at(-1)).toBe('run→que:recovery');
    expect(await starts(m)).toBe(1);
    // Its next run (made now) is the retry the decision counted: attempt 2, seeing attempt 1's failure.
    expect(await q.cmd('run_message', { msg_id: id })).toEqual(['ok', 'msg sent to front of run queue']);
    const after = await waitFor(
      async () => {
        const now = await getMessage(q, id);
        // Memory takes the new failures before the rename: wait for the move too.
        return now.failures === 2 && now.state === 'que' ? now : undefined;
      },
      'the second attempt to fail',
      20_000,
    );
    const log = await fs.readFile(path.join(ctx.t.root, after.path, 'job', 'stdio.log'), 'utf8');
    expect(log.match(/attempt=\d+ max=\d+/g)).toEqual(['attempt=1 max=3', 'attempt=2 max=3']);
  });
});

describe('kill -9 between an exhausted decision\'s msg write (with outcome) and its rename run → err (§B3.5 row 4, §B17 "exhaustion")', () => {
  it('the restart finishes it to err exhausted at load; it never runs again', async () => {
    const point = await startHeld('exhaust_held', { from: RUN, to: /\/err\//, when: 'before' });
    const id = await sendHeld(point, { param1: 'retry', param2: '-upstream busy', max_retries: 0 });
    expect(await msgOnDisk(ctx.q!, 'run', id)).toMatchObject({ outcome: 'exhausted', failures: 1 });

    const q = await killAndRestart('exhaust_held');
    expect(await fs.readdir(q.paths.state.run)).toEqual([]);
    expect(await fs.readdir(q.paths.state.que)).toEqual([]);
    expect(await q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1, done: 0 });
    const m = await getMessage(q, id);
    expect(m).toMatchObject({ state: 'err', outcome: 'exhausted', failures: 1, status: 'err - RETRIES EXHAUSTED (0) - upstream busy' });
    expect(moves(await historyFile(path.join(ctx.t.root, m.path)))).toEqual(['que→run:dispatcher', 'run→que:recovery', 'que→err:recovery']);
    expect(await starts(m)).toBe(1);
  });
});

describe('kill -9 between a que cancel\'s msg write and its rename que → err (§B17 "cancel (que)")', () => {
  it('the client got no ok; the restart finishes the message to err cancelled, and it never runs', async () => {
    const point = await startHeld('cancel_held', { from: /\/que\/[^/]+$/, to: /\/err\//, when: 'before' });
    const id = await ctx.q!.send({ param1: 'done', due: nowS() + 3600 });
    const answer = ctx.q!.cmd('cancel_message', { msg_id: id, reason: 'crash test', actor: 'cli:alice' }).then(
      (r) => r,
      (err: Error) => err.message,
    );
    await point.reached();
    expect(await msgOnDisk(ctx.q!, 'que', id)).toMatchObject({ outcome: 'cancelled', cancel: { by: 'cli:alice', reason: 'crash test' } });

    const q = await killAndRestart('cancel_held');
    expect(okReply(await answer)).toBe(false);
    expect(await fs.readdir(q.paths.state.que)).toEqual([]);
    const m = await getMessage(q, id);
    expect(m).toMatchObject({ state: 'err', outcome: 'cancelled', cancel: { by: 'cli:alice', reason: 'crash test' } });
    expect(moves(await historyFile(path.join(ctx.t.root, m.path)))).toEqual(['que→err:recovery']);
    // Due long ago or not, it is finished: nothing starts it.
    expect((await q.cmd('run_message', { msg_id: id }))[0]).toBe('fail');
    expect(await starts(m)).toBe(0);
  });
});

describe('kill -9 between a requeue\'s msg write and its rename err → que (§B17 "requeue")', () => {
  it('the client got no ok; the restart leaves it in err with its outcome cleared, and nothing runs it', async () => {
    const point = await startHeld('requeue_held', { from: /\/err\/[^/]+$/, to: /\/que\/[^/]+$/, when: 'before' });
    const id = await ctx.q!.send({ param1: 'retry', param2: '-upstream busy', max_retries: 0 });
    const failed = await ctx.q!.waitState(id, ['err']);
    expect(failed).toMatchObject({ outcome: 'exhausted', failures: 1 });
    const answer = ctx.q!.cmd('requeue_message', { msg_id: id }).then(
      (r) => r,
      (err: Error) => err.message,
    );
    await point.reached();
    const written = await msgOnDisk(ctx.q!, 'err', id);
    expect(written.outcome).toBeUndefined();

    const q = await killAndRestart('requeue_held');
    expect(okReply(await answer)).toBe(false);
    expect(await fs.readdir(q.paths.state.que)).toEqual([]);
    const m = await getMessage(q, id);
    expect(m.state).toBe('err');
    expect(m.outcome).toBeUndefined();
    expect(await q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1 });
    expect(await starts(m)).toBe(1);
    // The requeue asked again goes through: the message runs once more.
    expect((await q.cmd('requeue_message', { msg_id: id }))[0]).toBe('ok');
    const again = await q.waitState(id, ['err', 'done'], 20_000);
    expect(await starts(again)).toBe(2);
  });
});

describe('kill -9 between a fatal decision\'s msg write (with outcome) and its rename run → err (§B17 "fatal")', () => {
  it('the restart finishes it to err fatal at load; it is never retried, whatever its budget', async () => {
    const point = await startHeld('fatal_held', { from: RUN, to: /\/err\//, when: 'before' });
    const id = await sendHeld(point, { param1: 'fatal', param2: 'input is corrupt', max_retries: 5, backoff_base: 0.1, min_retry_delay: 0, retry_jitter: 0 });
    expect(await msgOnDisk(ctx.q!, 'run', id)).toMatchObject({ outcome: 'fatal', failures: 1, last_failure: { kind: 'fatal', text: 'input is corrupt' } });

    const q = await killAndRestart('fatal_held');
    expect(await fs.readdir(q.paths.state.run)).toEqual([]);
    expect(await fs.readdir(q.paths.state.que)).toEqual([]);
    expect(await q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1, done: 0 });
    const m = await getMessage(q, id);
    expect(m).toMatchObject({ state: 'err', outcome: 'fatal', failures: 1, status: 'err - input is corrupt' });
    expect(moves(await historyFile(path.join(ctx.t.root, m.path)))).toEqual(['que→run:dispatcher', 'run→que:recovery', 'que→err:recovery']);
    expect(await starts(m)).toBe(1);
  });
});

describe('kill -9 between an expiry\'s msg write (with outcome) and its rename que → err (§B17 "expiry")', () => {
  it("the restart finishes it to err expired at load, with the expiry's status; it never runs, though the queue is no longer paused", async () => {
    const pause = path.join(ctx.t.root, 'config', 'expiry_held.pause');
    await fs.writeFile(pause, '');
    const point = await startHeld('expiry_held', { from: /\/que\/[^/]+$/, to: /\/err\//, when: 'before' });
    const id = await ctx.q!.send({ param1: 'done', max_age: 0.5 });
    await point.reached();
    const decided = await msgOnDisk(ctx.q!, 'que', id);
    expect(decided.outcome).toBe('expired');
    const status: string = JSON.parse(await fs.readFile(path.join(ctx.q!.paths.state.que, id, 'status'), 'utf8')).job_status;
    expect(status).toMatch(/EXPIRED - not started by .*\(max_age 0\.5s after due\)$/);

    await fs.rm(pause);
    const q = await killAndRestart('expiry_held');
    expect(await fs.readdir(q.paths.state.que)).toEqual([]);
    expect(await q.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1, done: 0 });
    const m = await getMessage(q, id);
    expect(m).toMatchObject({ state: 'err', outcome: 'expired' });
    expect(m.status).toContain(status);
    // Finished by recovery from the decided outcome, not expired a second time by the load's deadline check.
    expect(moves(await historyFile(path.join(ctx.t.root, m.path)))).toEqual(['que→err:recovery']);
    expect((await q.cmd('run_message', { msg_id: id }))[0]).toBe('fail');
    expect(await starts(m)).toBe(0);
  });
});
