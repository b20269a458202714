// DependencyOutbox at its edges: an err finish or answer whose message cannot be read, a move to another state, a deleted entry whose message is back, how often a vanishing message is located, and close.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { DependencyOutbox, type Notified } from '../../../src/queue/dependencies/dependency-outbox.js';
import { readDependents } from '../../../src/spool/dependency-files.js';
import { ID, message, move, o, settle, until, useOutbox } from './outbox-harness.js';

useOutbox();

describe('a message that cannot be read', () => {
  it('an err finish records the outcome failed', async () => {
    const dir = await message(1, 'run', ['a/x1'], { outcome: 'timeout' });
    await fs.rm(path.join(dir, 'msg'));
    await o.box.beforeFinish(ID(1), 'run', 'err');
    expect((await o.outbox.list())[0]).toMatchObject({ state: 'err', outcome: 'failed' });
  });

  it('add_dependent on an err message answers failed', async () => {
    const dir = await message(1, 'err', [], { outcome: 'timeout' });
    await fs.rm(path.join(dir, 'msg'));
    expect(await o.box.addDependent(ID(1), 'a/x')).toEqual({ state: 'err', outcome: 'failed' });
  });
});

describe('the most dependents', () => {
  it('a message with as many dependents as it takes refuses another, naming itself and the bound; one it has is answered', async () => {
    o.box.close();
    o.box = new DependencyOutbox({
      spool: o.t.spool,
      events: o.events,
      log: silentLogger(),
      locate: async (id) => o.where.get(id) ?? null,
      notify: async () => 'resolved',
      queueExists: () => true,
      maxDependents: 2,
    });
    const dir = await message(1, 'que', ['a/x1', 'a/x2']);
    await expect(o.box.addDependent(ID(1), 'a/x3')).rejects.toMatchObject({
      code: 'RQ_ERR_TOO_MANY_DEPENDENTS',
      message: `dep/${ID(1)} already has 2 dependents, the most one message may have: let the others wait on a message that waits on it`,
    });
    expect(await o.box.addDependent(ID(1), 'a/x1')).toEqual({ state: 'que' });
    expect(await readDependents(dir)).toEqual(['a/x1', 'a/x2']);
  });
});

describe('moves and replay', () => {
  it('a move to another state than the entry records syncs and tells nothing', async () => {
    await message(1, 'run', ['a/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    await move(1, 'run', 'que');
    // Any sync of the que dir the box began is joined by this one: it has finished when this has.
    await o.t.spool.dirSync.sync(path.dirname(o.t.spool.msgDir('que', ID(1))));
    await settle();
    expect(o.notices).toEqual([]);
  });

  it('a deleted entry whose message exists again is stale: removed, not sent', async () => {
    await message(1, 'que');
    await o.outbox.write({ id: ID(1), state: 'deleted', dependents: ['a/x1'], done: [] });
    await o.box.replay();
    expect(await o.outbox.list()).toEqual([]);
    await settle();
    expect(o.notices).toEqual([]);
  });

  it('a message that keeps vanishing is located three times, then the error is passed on', async () => {
    const gone = path.join(o.t.spool.paths.state.run, 'gone');
    let located = 0;
    o.box = new DependencyOutbox({
      spool: o.t.spool,
      events: o.events,
      log: silentLogger(),
      locate: async () => (located++, { state: 'run', dir: gone }),
      notify: async () => 'resolved',
      queueExists: () => true,
    });
    await expect(o.box.addDependent(ID(1), 'b/y')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(located).toBe(3);
  });
});

describe('close', () => {
  it('stops telling dependents that do not answer, and keeps their entry for the next start', async () => {
    await message(1, 'run', ['a/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    o.notify = async () => ({ unanswered: 'connect ECONNREFUSED' });
    await move(1, 'run', 'done');
    await until(() => o.notices.length === 1);
    await until(() => vi.getTimerCount() === 1);
    o.box.close();
    await vi.advanceTimersByTimeAsync(120_000);
    await settle();
    expect(o.notices.length).toBe(1);
    expect((await o.outbox.list()).map((e) => e.id)).toEqual([ID(1)]);
  });

  it('a dependent that fails to answer while the box closes leaves the entry for the next start', async () => {
    await message(1, 'run', ['a/x1']);
    await o.box.beforeFinish(ID(1), 'run', 'done');
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    let answer!: (a: Notified) => void;
    o.notify = () => new Promise((r) => (answer = r));
    await move(1, 'run', 'done');
    await until(() => o.notices.length === 1);
    o.box.close();
    answer({ unanswered: 'connect ECONNREFUSED' });
    await settle();
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(o.notices.length).toBe(1);
    expect((await o.outbox.list()).map((e) => e.id)).toEqual([ID(1)]);
  });
});
