// Messages waiting for a concurrency slot: cancel, expiry, listing, status text, limit_held and running (rq-beyond §B1.3, §B1.8, §B2, §B4, §B12; real rq-mgr and queue).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MgrProc } from '../helpers/mgr-proc.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';
import { Limits, killGroup, writeLimits } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('spec details of waiting messages', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await writeLimits(t.root, { slot: 1 });
    await addQueue(t.root, 'w1', { num_workers: 3 });
    L = new Limits(t.root, await MgrProc.start(t.root), groups);
    await L.mgr.waitQueueUp('w1');
    await L.settled();
  });
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('cancel of a message waiting for a slot: err cancelled at once, its place in line given back', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('cancel-holder'), limit: 'slot' });
    const pid = await L.scriptPid('cancel-holder');
    const c = await L.send('w1', { param1: 'done', limit: 'slot' });
    const after = await L.send('w1', { param1: 'done', limit: 'slot' });
    await L.line('slot', [`w1/${c}`, `w1/${after}`]);
    expect(await L.mgr.q('w1', 'cancel_message', { msg_id: c })).toEqual(['ok', 'msg cancelled']);
    await L.line('slot', [`w1/${after}`], 'the cancelled waiter withdrawn');
    expect(await L.finish('w1', c)).toMatchObject({ state: 'err', status: expect.stringMatching(/^err - CANCELLED/) });
    killGroup(pid);
    expect(await L.finish('w1', after)).toMatchObject({ state: 'done' });
    expect(await L.finish('w1', holder)).toMatchObject({ state: 'err' });
    expect(await L.starts('w1', c)).toEqual([]);
  });

  it('a message waiting for a slot still expires (§B4: "expiry runs … for messages waiting on dependencies or slots"); it never starts', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('expiry-holder'), limit: 'slot' });
    const pid = await L.scriptPid('expiry-holder');
    const e = await L.send('w1', { param1: 'done', limit: 'slot', max_age: 1 });
    await L.line('slot', [`w1/${e}`]);
    try {
      // Due is now (floored to the second): the deadline is at most 1 s away.
      expect(await L.finish('w1', e, 5000).catch((err: Error) => ({ state: 'still waiting', status: err.message }))).toMatchObject({
        state: 'err',
        status: expect.stringMatching(/^err - EXPIRED - not started by \S+ \(max_age 1s after due\)$/),
      });
      await L.line('slot', [], 'the expired waiter withdrawn');
    } finally {
      killGroup(pid);
      await L.finish('w1', holder);
      await L.finish('w1', e);
    }
    expect(await L.starts('w1', e)).toEqual([]);
  });

  it('messages que lists messages waiting for a slot after the ready and delayed ones (§B2), as num_messages counts them', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('list-holder'), limit: 'slot' });
    const pid = await L.scriptPid('list-holder');
    const waiter = await L.send('w1', { param1: 'done', limit: 'slot' });
    const later = await L.send('w1', { param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    await L.line('slot', [`w1/${waiter}`]);
    try {
      expect((await L.mgr.q('w1', 'num_messages')).que).toBe(2);
      const listed = (await L.mgr.q('w1', 'messages', { state: 'que' })) as [string, number][];
      expect(listed.map(([id]) => id)).toEqual([later, waiter]);
    } finally {
      await L.mgr.q('w1', 'cancel_message', { msg_id: later });
      killGroup(pid);
      for (const id of [holder, waiter, later]) await L.finish('w1', id);
    }
  });

  it('get_message_status of a message waiting for a slot says so: que - WAITING FOR SLOT <key> (<n> ahead) (§B1.3)', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-holder'), limit: 'slot' });
    const pid = await L.scriptPid('slot-holder');
    const first = await L.send('w1', { param1: 'done', limit: 'slot' });
    const second = await L.send('w1', { param1: 'done', limit: 'slot' });
    await L.line('slot', [`w1/${first}`, `w1/${second}`]);
    try {
      expect((await L.mgr.q('w1', 'get_message_status', { msg_id: first }))[1]).toMatchObject({
        state: 'que',
        status: 'que - WAITING FOR SLOT slot (0 ahead)',
      });
      expect((await L.mgr.q('w1', 'get_message_status', { msg_id: second }))[1]).toMatchObject({
        state: 'que',
        status: 'que - WAITING FOR SLOT slot (1 ahead)',
      });
    } finally {
      killGroup(pid);
      for (const id of [holder, first, second]) await L.finish('w1', id);
    }
  });

  it("limit_held, rq-mgr's sweep question, names the messages that hold a slot, and none once they are done", async () => {
    const id = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-held'), limit: 'slot' });
    const pid = await L.scriptPid('slot-held');
    try {
      expect(await L.mgr.q('w1', 'limit_held')).toEqual(['ok', [id]]);
    } finally {
      killGroup(pid);
      await L.finish('w1', id);
    }
    expect(await L.mgr.q('w1', 'limit_held')).toEqual(['ok', []]);
  });

  it('running lists the key a run holds a slot of (§B1.8: {…, attempt, limit?})', async () => {
    const id = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-running'), limit: 'slot' });
    const pid = await L.scriptPid('slot-running');
    try {
      const running = (await L.mgr.q('w1', 'running'))[1] as { msg_id: string; limit?: string }[];
      expect(running.find((r) => r.msg_id === id)).toMatchObject({ msg_id: id, limit: 'slot' });
    } finally {
      killGroup(pid);
      await L.finish('w1', id);
    }
  });
});
