// Cancel, coalescing and re-keying in-process (rq-beyond §B5–§B7): what a cancel, set_priority and reschedule leave in memory, on disk and in the history.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type SpoolFs, nodeSpoolFs } from '../../../src/spool/spool-fs.js';
import { waitFor } from '../../helpers/rq-root.js';
import type { InProcess } from '../in-process.js';
import { inProcessQueues } from '../in-process-session.js';
import { history, nowS, view } from './lifecycle-ops-harness.js';
import { callByCallFs } from '../../helpers/call-by-call-fs.js';

const queue = inProcessQueues();

describe('cancel of a running message', () => {
  it('a second cancel answers cancelling but neither signals again nor replaces the first reason', async () => {
    const q = await queue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    s.onSignal = null;
    expect(await q.cmd('cancel_message', { msg_id: m.msg_id, reason: 'first', actor: 'cli:ann' })).toEqual(['ok', 'msg cancelling']);
    expect(await q.cmd('cancel_message', { msg_id: m.msg_id, reason: 'second', actor: 'cli:bob' })).toEqual(['ok', 'msg cancelling']);
    expect(s.signals.filter((sig) => sig === 'SIGTERM')).toHaveLength(1);
    const end = q.next('finished');
    s.exit(null, 'SIGTERM');
    expect((await end).outcome).toMatchObject({ state: 'err', statusText: 'CANCELLED - first' });
    expect((await history(q, m.msg_id)).filter((l) => l.event === 'cancel_requested')).toEqual([
      expect.objectContaining({ actor: 'cli:ann', reason: 'first' }),
    ]);
  });

  it('a cancel marker that cannot be written is refused: no TERM, and the run ends as its script says', async () => {
    const q = await queue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    // A directory where the marker's temporary file goes makes its write fail.
    await fs.mkdir(path.join(q.queue.spool.msgDir('run', m.msg_id), 'cancel.tmp', 'x'), { recursive: true });
    expect((await q.cmd('cancel_message', { msg_id: m.msg_id }))[0]).toBe('fail');
    expect(s.signals).toEqual([]);
    const end = q.next('finished');
    s.say('done anyway');
    s.exit(0);
    expect((await end).outcome.state).toBe('done');
    expect((await history(q, m.msg_id)).some((l) => l.event === 'cancel_requested')).toBe(false);
  });
});

describe('coalesced messages', () => {
  /** A runs with B and C folded into it; D runs on the other worker with E folded into it. */
  async function folded(p: InProcess) {
    const [a, b, c] = [await p.send({ param1: 'x' }), await p.send({ param1: 'x' }), await p.send({ param1: 'x' })];
    const [d, e] = [await p.send({ param1: 'y' }), await p.send({ param1: 'y' })];
    await fs.rm(path.join(p.root, 'config', 'q.pause'));
    p.queue.status();
    const scripts = [await p.launcher.nth(0), await p.launcher.nth(1)];
    const script = (id: string) => scripts.find((s) => s.env.RQ_MSG_ID === id)!;
    for (const id of [b, c, e].map((m) => m.msg_id)) expect((await view(p, id)).waiting?.reason).toBe('coalesced');
    return { ids: [a, b, c, d, e].map((m) => m.msg_id), script };
  }

  it('a cancelled one leaves its parent, which finishes with the others and still lists them', async () => {
    const q = await queue({ num_workers: 2, coalesce_params: [1] }, { paused: true });
    const {
      ids: [a, b, c, d, e],
      script,
    } = await folded(q);
    expect((await view(q, a)).dups).toEqual([b, c]);
    expect(await q.cmd('set_priority', { msg_id: b, priority: 1 })).toEqual(['fail', 'msg not in que or prep (coalesced)']);
    // E first: A, looked at first, does not hold it and must keep both of its own.
    expect(await q.cmd('cancel_message', { msg_id: e })).toEqual(['ok', 'msg cancelled']);
    expect((await view(q, d)).dups).toBeUndefined();
    expect(await q.cmd('cancel_message', { msg_id: c })).toEqual(['ok', 'msg cancelled']);
    expect((await view(q, a)).dups).toEqual([b]);
    const done = q.next('finished', (f) => f.msg.msg_id === a);
    script(a).say('done together');
    script(a).exit(0);
    await done;
    expect([await q.state(a), await q.state(b), await q.state(c), await q.state(e)]).toEqual(['done', 'done', 'err', 'err']);
    expect((await view(q, c)).outcome).toBe('cancelled');
  });
});

/** The real disk, but once armed the fsync of that directory waits for `release`: a test acts between a write's rename and its directory fsync. */
function holdDirSync() {
  let target: string | null = null;
  let reached!: () => void;
  let release!: () => void;
  const arrived = new Promise<void>((r) => (reached = r));
  const released = new Promise<void>((r) => (release = r));
  const fs: SpoolFs = {
    ...callByCallFs,
    open: async (p, flags, mode) => {
      const fh = await nodeSpoolFs.open(p, flags, mode);
      if (p !== target) return fh;
      target = null;
      const sync = async () => {
        reached();
        await released;
        await fh.sync();
      };
      return new Proxy(fh, {
        get: (t, k) => {
          const v = Reflect.get(t, k);
          return k === 'sync' ? sync : typeof v === 'function' ? v.bind(t) : v;
        },
      });
    },
  };
  return { fs, arm: (dir: string) => (target = dir), arrived, release };
}

describe('set_priority and reschedule', () => {
  it('write a history line naming the change and who asked', async () => {
    const q = await queue({}, { paused: true });
    const m = await q.send();
    expect(await q.cmd('set_priority', { msg_id: m.msg_id, priority: -7, actor: 'cli:dan' })).toEqual(['ok', -7]);
    expect((await history(q, m.msg_id)).at(-1)).toEqual({ at: expect.any(String), event: 'priority', actor: 'cli:dan', priority: -7 });
  });

  it('of a prep message hold when it is committed', async () => {
    const q = await queue({}, { paused: true });
    const id = String((await q.cmd('prep_message', { dest: 'q' }))[1])
      .split('/')
      .pop()!;
    const due = nowS(q) + 3600;
    expect(await q.cmd('reschedule_message', { msg_id: id, due })).toEqual(['ok', due]);
    expect(await q.cmd('set_priority', { msg_id: id, priority: -2 })).toEqual(['ok', -2]);
    expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['ok', 'msg commited']);
    expect(await view(q, id)).toMatchObject({ state: 'que', due, priority: -2, waiting: { reason: 'delayed', due } });
  });

  it('of a prep message committed during its write: the que message takes the change in memory as on disk', async () => {
    const gate = holdDirSync();
    const q = await queue({}, { paused: true, fs: () => gate.fs });
    const id = String((await q.cmd('prep_message', { dest: 'q' }))[1])
      .split('/')
      .pop()!;
    const due = nowS(q) + 3600;
    gate.arm(q.queue.spool.msgDir('prep', id));
    const rescheduled = q.cmd('reschedule_message', { msg_id: id, due });
    await gate.arrived;
    expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['ok', 'msg commited']);
    gate.release();
    expect(await rescheduled).toEqual(['ok', due]);
    expect(await q.cmd('num_messages')).toMatchObject({ prep: 0, que: 1 });
    expect(await view(q, id)).toMatchObject({ state: 'que', due, waiting: { reason: 'delayed', due } });
  });

  it('of a message waiting on its dependency hold in memory: shown at once, and it waits for its new due once let go', async () => {
    const q = await queue({}, { paused: true });
    const dep = await q.send();
    const id = String((await q.cmd('create_message', { dest: 'q', depends: [`q/${dep.msg_id}`] }))[1])
      .split('/')
      .pop()!;
    expect((await view(q, id)).waiting?.reason).toBe('dependencies');
    const due = nowS(q) + 3600;
    expect(await q.cmd('reschedule_message', { msg_id: id, due })).toEqual(['ok', due]);
    expect(await q.cmd('set_priority', { msg_id: id, priority: 3 })).toEqual(['ok', 3]);
    expect(await view(q, id)).toMatchObject({ due, priority: 3 });
    await fs.rm(path.join(q.root, 'config', 'q.pause'));
    q.queue.status();
    const s = await q.launcher.nth(0);
    s.say('done');
    s.exit(0);
    await waitFor(async () => (await view(q!, id)).waiting?.reason !== 'dependencies', 'the dependent to be let go');
    expect(await view(q, id)).toMatchObject({ state: 'que', due, priority: 3, waiting: { reason: 'delayed', due } });
    expect(q.launcher.started).toHaveLength(1);
  });
});
