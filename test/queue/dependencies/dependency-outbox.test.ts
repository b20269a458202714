// DependencyOutbox in this process over a temp spool: the outbox entry written before a finish, dependents told once the move lands, add_dependent's answers, replay at start, and retries of unanswered notifications.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { readDependents } from '../../../src/spool/dependency-files.js';
import { DependencyOutbox } from '../../../src/queue/dependencies/dependency-outbox.js';
import { ID, message, move, o, settle, until, useOutbox } from './outbox-harness.js';

useOutbox();

describe('beforeFinish and the move', () => {
  it('a message without dependents writes nothing', async () => {
    await message(1, 'run');
    expect(o.box.beforeFinish(ID(1), 'run', 'done')).toBeUndefined();
    expect(await o.outbox.list()).toEqual([]);
  });

  it('writes the entry before the move, tells every dependent once it lands, then removes the entry', async () => {
    await message(1, 'run', ['a/x1', 'b/x2', 'a/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    expect(await o.outbox.list()).toEqual([{ id: ID(1), state: 'done', dependents: ['a/x1', 'b/x2'], done: [] }]);
    expect(o.notices).toEqual([]);
    await move(1, 'run', 'done');
    await until(async () => (await o.outbox.list()).length === 0);
    expect(o.notices.sort()).toEqual([
      ['a/x1', { dependency: `dep/${ID(1)}`, state: 'done' }],
      ['b/x2', { dependency: `dep/${ID(1)}`, state: 'done' }],
    ]);
  });

  it('an err finish carries the outcome from the message, or failed without one', async () => {
    await message(1, 'run', ['a/x1'], { outcome: 'timeout' });
    await o.box.beforeFinish(ID(1), 'run', 'err');
    expect((await o.outbox.list())[0]).toEqual({ id: ID(1), state: 'err', outcome: 'timeout', dependents: ['a/x1'], done: [] });
    await move(1, 'run', 'err');
    await until(() => o.notices.length === 1);
    expect(o.notices[0][1]).toEqual({ dependency: `dep/${ID(1)}`, state: 'err', outcome: 'timeout' });
    await message(2, 'run', ['a/x2']);
    await o.box.beforeFinish(ID(2), 'run', 'err');
    expect((await o.outbox.list()).find((e) => e.id === ID(2))?.outcome).toBe('failed');
  });

  it('a removal tells the dependents deleted', async () => {
    await message(1, 'que', ['a/x1']);
    await o.box.beforeFinish(ID(1), 'que', 'deleted');
    o.events.emit('removed', { id: ID(1), state: 'que' });
    await until(() => o.notices.length === 1);
    expect(o.notices[0][1]).toEqual({ dependency: `dep/${ID(1)}`, state: 'deleted' });
  });

  it('a message deleted after it ended tells its end, not a deletion, and add_dependent answers that end while it is told', async () => {
    await message(1, 'done', ['a/x1']);
    o.notify = async () => ({ unanswered: 'connect ECONNREFUSED' });
    await o.box.beforeFinish(ID(1), 'done', 'deleted');
    expect(await o.outbox.list()).toEqual([{ id: ID(1), state: 'done', dependents: ['a/x1'], done: [], deleted: true }]);
    await fs.rm(o.where.get(ID(1))!.dir, { recursive: true });
    o.where.delete(ID(1));
    o.events.emit('removed', { id: ID(1), state: 'done' });
    await until(() => o.notices.length === 1);
    expect(o.notices[0][1]).toEqual({ dependency: `dep/${ID(1)}`, state: 'done' });
    expect(await o.box.addDependent(ID(1), 'b/y')).toEqual({ state: 'done' });
    // Replayed at a restart while the dependent has not answered: the message is gone, as the entry says.
    o.notices.length = 0;
    await o.box.replay();
    await until(() => o.notices.length === 1);
    await message(2, 'err', ['a/x2'], { outcome: 'timeout' });
    await o.box.beforeFinish(ID(2), 'err', 'deleted');
    expect((await o.outbox.list()).find((e) => e.id === ID(2))).toMatchObject({ state: 'err', outcome: 'timeout', deleted: true });
  });

  it('a move to another state than the entry says tells nobody (the finish did not happen as written)', async () => {
    await message(1, 'run', ['a/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    await move(1, 'run', 'que');
    o.events.emit('moved', { id: ID(9), from: 'run', to: 'done', actor: 'queue' });
    await settle();
    expect(o.notices).toEqual([]);
    expect((await o.outbox.list()).length).toBe(1);
  });

  it('a dependent of a queue that no longer exists is not asked, and the entry goes', async () => {
    await message(1, 'run', ['gone/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    await move(1, 'run', 'done');
    await until(async () => (await o.outbox.list()).length === 0);
    expect(o.notices).toEqual([]);
  });

  it('a failed o.outbox write is thrown, and a registration does not wait for that finish', async () => {
    await message(1, 'run', ['a/x1']);
    await fs.writeFile(path.join(o.t.spool.paths.dir, '.outbox'), 'not a dir');
    await expect(o.box.beforeFinish(ID(1), 'run', 'done')).rejects.toThrow();
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    expect(await o.box.addDependent(ID(1), 'b/y')).toEqual({ state: 'run' });
  });
});

describe('unanswered notifications', () => {
  it('are sent again after 1 s, then 2 s, only to the dependents that did not answer', async () => {
    await message(1, 'run', ['a/x1', 'b/x2']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    let b = 0;
    o.notify = async (d) => (d === 'b/x2' && b++ < 2 ? { unanswered: 'connect ECONNREFUSED' } : 'ignored');
    await move(1, 'run', 'done');
    await until(() => o.notices.length === 2);
    expect(o.notices.map(([d]) => d).sort()).toEqual(['a/x1', 'b/x2']);
    await vi.advanceTimersByTimeAsync(999);
    expect(o.notices.length).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => o.notices.length === 3);
    expect(o.notices.filter(([d]) => d === 'b/x2').length).toBe(2);
    expect(o.notices.filter(([d]) => d === 'a/x1').length).toBe(1);
    expect((await o.outbox.list()).length).toBe(1);
    await vi.advanceTimersByTimeAsync(1999);
    await settle();
    expect(o.notices.length).toBe(3);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => o.notices.length === 4);
    expect(o.notices.filter(([d]) => d === 'b/x2').length).toBe(3);
    await until(async () => (await o.outbox.list()).length === 0);
  });
});

describe('addDependent', () => {
  it('refuses a message that is nowhere', async () => {
    await expect(o.box.addDependent(ID(1), 'a/x')).rejects.toMatchObject({ code: 'RQ_ERR_NO_SUCH_MSG' });
  });

  it('answers done or relayed without registering', async () => {
    const dir = await message(1, 'done');
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'done' });
    const rdir = await message(2, 'relayed');
    expect(await o.box.addDependent(ID(2), 'a/x')).toEqual({ state: 'relayed' });
    expect(await readDependents(dir)).toEqual([]);
    expect(await readDependents(rdir)).toEqual([]);
  });

  it('registers a dependent once and answers o.where the message is', async () => {
    const dir = await message(1, 'que');
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'que' });
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'que' });
    expect(await o.box.addDependent(ID(1), 'b/y')).toEqual({ state: 'que' });
    expect(await readDependents(dir)).toEqual(['a/x', 'b/y']);
    const lines = (await fs.readFile(path.join(dir, 'dependents'), 'utf8')).trim().split('\n');
    expect(lines.length).toBe(2);
  });

  it('an err message answers with its outcome, an acknowledged one too, failed without one', async () => {
    await message(1, 'err', [], { outcome: 'timeout' });
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'err', outcome: 'timeout' });
    const acked = path.join(o.t.spool.paths.state.err, `.${ID(2)}`);
    await fs.mkdir(acked, { recursive: true });
    await o.t.spool.writeMessage('err', `.${ID(2)}`, { msg_id: ID(2), outcome: 'killed' } as never);
    o.where.set(ID(2), { state: 'err', dir: acked });
    expect(await o.box.addDependent(ID(2), 'a/x')).toEqual({ state: 'err', outcome: 'killed' });
    await message(3, 'err');
    expect(await o.box.addDependent(ID(3), 'a/x')).toEqual({ state: 'err', outcome: 'failed' });
  });

  it('a message that vanished after registering is not found', async () => {
    await message(1, 'que');
    let n = 0;
    const dir = o.where.get(ID(1))!.dir;
    o.box = new DependencyOutbox({
      spool: o.t.spool,
      events: o.events,
      log: silentLogger(),
      locate: async () => (n++ === 0 ? { state: 'que', dir } : null),
      notify: async () => 'resolved',
      queueExists: () => true,
    });
    await expect(o.box.addDependent(ID(1), 'a/x')).rejects.toMatchObject({ code: 'RQ_ERR_NO_SUCH_MSG' });
  });

  it('a message moved away between locating and appending is located again, at most three times', async () => {
    const real = await message(1, 'run');
    const gone = path.join(o.t.spool.paths.state.run, 'gone');
    let n = 0;
    o.box = new DependencyOutbox({
      spool: o.t.spool,
      events: o.events,
      log: silentLogger(),
      locate: async () => (n++ < 2 ? { state: 'run', dir: gone } : { state: 'run', dir: real }),
      notify: async () => 'resolved',
      queueExists: () => true,
    });
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'run' });
    expect(await readDependents(real)).toEqual(['a/x']);
    n = -10;
    await expect(o.box.addDependent(ID(1), 'b/y')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('waits for a finish in progress and answers its end state', async () => {
    await message(1, 'run', ['a/x']);
    await o.box.beforeFinish(ID(1), 'run', 'err');
    let answered: unknown;
    const p = o.box.addDependent(ID(1), 'b/y').then((a) => (answered = a));
    await settle();
    expect(answered).toBeUndefined();
    await move(1, 'run', 'err');
    await p;
    expect(answered).toEqual({ state: 'err', outcome: 'failed' });
  });

  it('waits at most 10 s for a finish that never reports, before registering and again before answering', async () => {
    const dir = await message(1, 'run', ['a/x']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    let answered: unknown;
    void o.box.addDependent(ID(1), 'b/y').then((a) => (answered = a));
    await vi.advanceTimersByTimeAsync(9_999);
    await settle();
    expect(await readDependents(dir)).toEqual(['a/x']);
    await vi.advanceTimersByTimeAsync(1);
    await until(async () => (await readDependents(dir)).includes('b/y'));
    // The second wait has begun: its timer is set.
    await until(() => vi.getTimerCount() === 1);
    expect(answered).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    await until(() => answered !== undefined);
    expect(answered).toEqual({ state: 'run' });
  });
});

describe('replay', () => {
  it('sends again an entry whose message is in the state it records, and drops a stale one', async () => {
    await message(1, 'done');
    await message(2, 'que');
    await o.outbox.write({ id: ID(1), state: 'done', dependents: ['a/x1', 'b/x2'], done: ['b/x2'] });
    await o.outbox.write({ id: ID(2), state: 'done', dependents: ['a/x3'], done: [] });
    await o.outbox.write({ id: ID(3), state: 'deleted', dependents: ['a/x4'], done: [] });
    await o.outbox.write({ id: ID(4), state: 'err', outcome: 'failed', dependents: ['a/x5'], done: [] });
    await o.box.replay();
    await until(async () => (await o.outbox.list()).length === 0);
    expect(o.notices.sort()).toEqual([
      ['a/x1', { dependency: `dep/${ID(1)}`, state: 'done' }],
      ['a/x4', { dependency: `dep/${ID(3)}`, state: 'deleted' }],
    ]);
  });
});
