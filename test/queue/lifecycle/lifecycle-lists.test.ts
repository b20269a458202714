// Cancel with purge, waiting for a message to finish, requeue of every err message, and the running and waiting lists (rq-beyond §B5, §B6, §B2, §B11).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, pidInFile } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
let paused: QueueProc;

const pauseFile = () => path.join(t.root, 'config', 'held.pause');

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'lq', { num_workers: 3, extra: { kill_grace: 0.3 } });
  await addQueue(t.root, 'held', { num_workers: 1 });
  [q, paused] = await Promise.all([QueueProc.start(t.root, 'lq'), QueueProc.start(t.root, 'held')]);
});
afterAll(async () => {
  await Promise.all([q?.stop(), paused?.stop()]);
  await t?.cleanup();
});

const later = () => Math.floor(Date.now() / 1000) + 3600;

describe('cancel with purge', () => {
  it('a queued message is removed, not kept in err; the err count does not move', async () => {
    const id = await q.send({ param1: 'done', due: later() });
    const errs = (await q.cmd('num_messages')).err;
    expect(await q.cmd('cancel_message', { msg_id: id, purge: true })).toEqual(['ok', 'msg cancelled']);
    expect(await q.cmd('get_message', { msg_id: id })).toEqual(['fail', 'msg not found']);
    expect((await q.cmd('num_messages')).err).toBe(errs);
    expect(await fs.readdir(path.join(t.root, 'queues', 'lq', 'err'))).not.toContain(id);
  });

  it('a running message is killed, then removed; waiting on it answers deleted', async () => {
    const pidFile = path.join(t.root, 'purge-run.pid');
    const id = await q.send({ param1: 'forever', param2: pidFile });
    const pid = await pidInFile(pidFile);
    expect(await q.cmd('cancel_message', { msg_id: id, purge: 'true' })).toEqual(['ok', 'msg cancelling']);
    expect(await q.cmd('wait_message', { msg_id: id, timeout: 10 })).toEqual(['ok', { path: null, status: 'deleted', state: 'deleted' }]);
    expect(await q.cmd('get_message', { msg_id: id })).toEqual(['fail', 'msg not found']);
    expect(alive(pid)).toBe(false);
  });

  it('refuses a purge flag that is not true or false', async () => {
    const id = await q.send({ param1: 'done', due: later() });
    expect(await q.cmd('cancel_message', { msg_id: id, purge: 'yes' })).toEqual(['fail', 'purge: expected true or false, received "yes"']);
    expect(await q.state(id)).toBe('que');
  });
});

describe('wait_message', () => {
  it('answers once the message has finished, through its retries, with its final status', async () => {
    const id = await q.send({ param1: 'flaky', param2: '2', max_retries: 2, backoff_base: 0.05, min_retry_delay: 0, retry_jitter: 0 });
    const [ok, status] = await q.cmd('wait_message', { msg_id: id, timeout: 10 });
    expect(ok).toBe('ok');
    expect(status).toMatchObject({ state: 'done', status: 'done - on attempt 2' });
    // A finished message answers at once.
    expect((await q.cmd('wait_message', { msg_id: id }))[1]).toMatchObject({ state: 'done' });
  });

  it('times out on a message that does not finish, and refuses unknown ids and bad timeouts', async () => {
    const id = await q.send({ param1: 'done', due: later() });
    expect(await q.cmd('wait_message', { msg_id: id, timeout: 1 })).toEqual(['fail', 'timed out']);
    expect(await q.cmd('wait_message', { msg_id: id, timeout: 0 })).toEqual(['fail', 'timeout: expected a whole number from 1 to 86400, received 0']);
    expect(await q.cmd('wait_message', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'msg not found']);
    await q.cmd('cancel_message', { msg_id: id });
  });
});

describe('wait_message at a shutdown', () => {
  it('a wait in flight is answered status: DOWN at once, so the queue stops without waiting it out', async () => {
    await addQueue(t.root, 'stopping', {});
    const s = await QueueProc.start(t.root, 'stopping');
    const id = await s.send({ param1: 'done', due: later() });
    const reply = s.cmd('wait_message', { msg_id: id, timeout: 600 });
    // The queue logs the wait as it starts it: from then on the request is in flight.
    const log = path.join(t.root, 'log', 'queue-stopping.log');
    await waitFor(async () => (await fs.readFile(log, 'utf8')).includes('waiting for the message to finish'), 'the wait to start');
    const t0 = Date.now();
    await s.stop();
    expect(await reply).toEqual(['fail', 'status: DOWN']);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});

describe('requeue_errs', () => {
  it('sends every unacknowledged err message of an outcome back to the que, oldest first, up to a limit', async () => {
    // Three plain failures (no outcome, read as failed) and one cancelled message, then the queue is paused so requeued ones stay put.
    const failed: string[] = [];
    for (let i = 0; i < 3; i++) failed.push(await paused.send({ param1: 'err' }));
    for (const id of failed) await paused.waitState(id, ['err']);
    const cancelled = await paused.send({ param1: 'done', due: later() });
    await paused.cmd('cancel_message', { msg_id: cancelled });
    await fs.writeFile(pauseFile(), '');
    await waitFor(async () => (await paused.cmd('status'))[0] === 'PAUSE', 'PAUSE');
    expect((await paused.cmd('num_messages')).err).toBe(4);
    expect(await paused.cmd('requeue_errs', { outcome: 'exhausted' })).toEqual(['ok', 0]);
    expect(await paused.cmd('requeue_errs', { outcome: 'cancelled', actor: 'cli:carol' })).toEqual(['ok', 1]);
    expect(await paused.state(cancelled)).toBe('que');
    // Derived in get_message (§B1.2), never stored: the paused queue holds it ready.
    expect((await paused.cmd('get_message', { msg_id: cancelled }))[1].waiting).toEqual({ reason: 'ready' });
    expect(await fs.readFile(path.join(t.root, 'queues', 'held', 'que', cancelled, 'msg'), 'utf8')).not.toContain('waiting');
    expect(await paused.cmd('requeue_errs', { limit: 2 })).toEqual(['ok', 2]);
    expect(await Promise.all(failed.map((id) => paused.state(id)))).toEqual(['que', 'que', 'err']);
    expect(await paused.cmd('requeue_errs', {})).toEqual(['ok', 1]);
    expect((await paused.cmd('num_messages')).err).toBe(0);
    const h = (await paused.cmd('get_history', { msg_id: cancelled }))[1];
    expect(h.at(-1)).toMatchObject({ from: 'err', to: 'que', actor: 'cli:carol' });
  });

  it('refuses unknown outcomes, groups and bad limits; nothing moves', async () => {
    const errs = (await paused.cmd('num_messages')).err;
    expect(await paused.cmd('requeue_errs', { outcome: 'nope' })).toEqual([
      'fail',
      'outcome: expected one of failed, exhausted, fatal, expired, cancelled, dependency_failed, interrupted, received "nope"',
    ]);
    expect((await paused.cmd('requeue_errs', { group: 'two words' }))[1]).toMatch(/^group: expected a failure group.*received "two words"/);
    // A group no err message is in moves nothing.
    expect(await paused.cmd('requeue_errs', { group: 'NoSuchError' })).toEqual(['ok', 0]);
    expect(await paused.cmd('requeue_errs', { limit: 0 })).toEqual(['fail', 'limit: expected a whole number from 1 to 1000000, received 0']);
    expect((await paused.cmd('num_messages')).err).toBe(errs);
  });
});

describe('running and waiting', () => {
  it('running lists each script with its pid, attempt, clocks and deadline', async () => {
    const pidFile = path.join(t.root, 'listed.pid');
    const before = Date.now();
    const id = await q.send({ param1: 'forever', param2: pidFile, timeout: 600 });
    const pid = await pidInFile(pidFile);
    const [ok, list] = await q.cmd('running');
    expect(ok).toBe('ok');
    const entry = list.find((e: { msg_id: string }) => e.msg_id === id);
    expect(entry).toMatchObject({ msg_id: id, pid, attempt: 1, heartbeat_timeout: null });
    const started = Date.parse(entry.started_at);
    expect(started).toBeGreaterThanOrEqual(before - 5);
    expect(Date.parse(entry.deadline) - started).toBe(600_000);
    // `forever` wrote one `run` line: that is its last sign of life.
    expect(Date.parse(entry.last_beat)).toBeGreaterThanOrEqual(started);
    expect(entry.silent_s).toBeGreaterThanOrEqual(0);
    await q.cmd('cancel_message', { msg_id: id });
    await q.waitState(id, ['err']);
    expect((await q.cmd('running'))[1].map((e: { msg_id: string }) => e.msg_id)).not.toContain(id);
  });

  it('waiting lists delayed messages by due, filters by reason, refuses unknown reasons', async () => {
    const due = later();
    const a = await q.send({ param1: 'done', due: due + 10 });
    const b = await q.send({ param1: 'done', due });
    const listed = (await q.cmd('waiting'))[1].filter((e: { msg_id: string }) => e.msg_id === a || e.msg_id === b);
    expect(listed).toEqual([
      { msg_id: b, reason: 'delayed', due },
      { msg_id: a, reason: 'delayed', due: due + 10 },
    ]);
    expect((await q.cmd('get_message', { msg_id: b }))[1].waiting).toEqual({ reason: 'delayed', due });
    expect(await q.cmd('waiting', { reason: 'coalesced' })).toEqual(['ok', []]);
    expect(await q.cmd('waiting', { reason: 'sleepy' })).toEqual([
      'fail',
      'reason: expected one of delayed, coalesced, dependencies, limit, received "sleepy"',
    ]);
    expect((await q.cmd('waiting', { limit: 1 }))[1]).toHaveLength(1);
    for (const id of [a, b]) await q.cmd('cancel_message', { msg_id: id });
  });
});
