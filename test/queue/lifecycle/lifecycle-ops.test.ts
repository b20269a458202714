// Cancel, requeue and re-keying in-process (rq-beyond §B5–§B7): what each leaves in memory, on disk and in the history.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type SpoolFs, nodeSpoolFs } from '../../../src/spool/spool-fs.js';
import { recordingFs, type RecordingFs } from '../../helpers/recording-fs.js';
import { waitFor } from '../../helpers/rq-root.js';
import { type InProcess, inProcessQueue } from '../in-process.js';

let q: InProcess | null = null;
afterEach(async () => {
  await q?.close();
  q = null;
});

const nowS = (p: InProcess) => Math.floor(p.clock.ms / 1000);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const view = async (p: InProcess, id: string): Promise<any> => (await p.cmd('get_message', { msg_id: id }))[1];
const history = async (p: InProcess, id: string): Promise<Record<string, unknown>[]> => (await p.cmd('get_history', { msg_id: id }))[1];

describe('cancel of a running message', () => {
  it('a second cancel answers cancelling but neither signals again nor replaces the first reason', async () => {
    q = await inProcessQueue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    s.onSignal = null;
    expect(await q.cmd('cancel_message', { msg_id: m.msg_id, reason: 'first', actor: 'cli:ann' })).toEqual(['ok', 'msg cancelling']);
    expect(await q.cmd('cancel_message', { msg_id: m.msg_id, reason: 'second', actor: 'cli:bob' })).toEqual(['ok', 'msg cancelling']);
    expect(s.signals.filter((sig) => sig === 'SIGTERM')).toHaveLength(1);
    const end = q.next('finished');
    s.exit(null, 'SIGTERM');
    expect((await end).outcome).toMatchObject({ state: 'err', statusText: 'CANCELLED - first' });
    expect((await history(q, m.msg_id)).filter((l) => l.event === 'cancel_requested')).toEqual([expect.objectContaining({ actor: 'cli:ann', reason: 'first' })]);
  });

  it('a cancel marker that cannot be written is refused: no TERM, and the run ends as its script says', async () => {
    q = await inProcessQueue();
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
    q = await inProcessQueue({ num_workers: 2, coalesce_params: [1] }, { paused: true });
    const { ids: [a, b, c, d, e], script } = await folded(q);
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

describe('requeue', () => {
  /** A message whose one retry failed too: err `exhausted` with 2 failures. */
  async function exhausted(p: InProcess): Promise<string> {
    const m = await p.send({ max_retries: 1, min_retry_delay: 0, backoff_base: 1, retry_jitter: 0 });
    for (const n of [0, 1]) {
      const s = await p.launcher.nth(n);
      const end = p.next('finished');
      s.say(`err attempt ${n + 1}`);
      s.exit(0);
      await end;
      p.clock.ms += 5000;
      p.queue.pump();
    }
    return m.msg_id;
  }

  it('drops an expire_at that has passed (or is now), keeps a future one', async () => {
    q = await inProcessQueue({}, { paused: true });
    const t = nowS(q);
    const ids = [];
    for (const at of [t + 10, t + 20, t + 3600]) ids.push((await q.send({ expire_at: at })).msg_id);
    for (const id of ids) expect(await q.cmd('cancel_message', { msg_id: id })).toEqual(['ok', 'msg cancelled']);
    q.clock.ms = (t + 20) * 1000;
    for (const id of ids) expect(await q.cmd('requeue_message', { msg_id: id })).toEqual(['ok', 'msg requeued']);
    q.queue.pump();
    const views = await Promise.all(ids.map((id) => view(q!, id)));
    expect(views.map((m) => [m.state, m.expire_at])).toEqual([
      ['que', undefined],
      ['que', undefined],
      ['que', t + 3600],
    ]);
  });

  it('keeps the failures and names its actor; with reset drops failures and last_failure, and its history line says reset', async () => {
    q = await inProcessQueue();
    const id = await exhausted(q);
    await q.pause();
    expect(await view(q, id)).toMatchObject({ state: 'err', outcome: 'exhausted', failures: 2, last_failure: expect.any(Object) });
    expect(await q.cmd('requeue_message', { msg_id: id, actor: 'cli:eve' })).toEqual(['ok', 'msg requeued']);
    expect(await view(q, id)).toMatchObject({ state: 'que', failures: 2 });
    expect((await history(q, id)).at(-1)).toEqual({ at: expect.any(String), from: 'err', to: 'que', actor: 'cli:eve' });
    await q.cmd('cancel_message', { msg_id: id });
    expect(await q.cmd('requeue_message', { msg_id: id, reset: true })).toEqual(['ok', 'msg requeued']);
    const requeued = await view(q, id);
    expect([requeued.state, requeued.failures, requeued.last_failure]).toEqual(['que', undefined, undefined]);
    expect((await history(q, id)).at(-1)).toEqual({ at: expect.any(String), from: 'err', to: 'que', actor: 'requeue', reset: true });
  });

  it('of an acknowledged err message leaves the err count to the unacknowledged ones', async () => {
    q = await inProcessQueue();
    const acked = await q.runToEnd({}, 'err first', 0);
    expect(await q.cmd('ack_errs')).toEqual(['ok', 1]);
    await q.runToEnd({}, 'err second', 0);
    await q.pause();
    expect((await q.cmd('num_messages')).err).toBe(1);
    expect(await q.cmd('requeue_message', { msg_id: acked.msg_id })).toEqual(['ok', 'msg requeued']);
    expect(await q.cmd('num_messages')).toMatchObject({ que: 1, err: 1 });
  });
});

describe('requeue_errs', () => {
  /** A plain failure (no outcome) and a cancelled message in err, the queue paused. */
  async function twoErrs(p: InProcess) {
    const plain = await p.runToEnd({}, 'err by design', 0);
    await p.pause();
    const cancelled = await p.send();
    await p.cmd('cancel_message', { msg_id: cancelled.msg_id });
    expect((await view(p, plain.msg_id)).outcome).toBeUndefined();
    return { plain: plain.msg_id, cancelled: cancelled.msg_id };
  }

  it('outcome failed picks the messages without an outcome; a group picks its own', async () => {
    q = await inProcessQueue();
    const { plain, cancelled } = await twoErrs(q);
    expect(await q.cmd('requeue_errs', { group: 'cancelled' })).toEqual(['ok', 1]);
    expect([await q.state(plain), await q.state(cancelled)]).toEqual(['err', 'que']);
    expect(await q.cmd('requeue_errs', { outcome: 'failed' })).toEqual(['ok', 1]);
    expect(await q.state(plain)).toBe('que');
  });

  it('a message whose write fails (a full disk) is named in a partial reply, never dropped from the count unsaid; the others are requeued', async () => {
    q = await inProcessQueue();
    const { plain, cancelled } = await twoErrs(q);
    const spool = q.queue.spool as unknown as { writeMessage: (state: string, id: string, ...rest: unknown[]) => Promise<void> };
    const real = spool.writeMessage.bind(spool);
    spool.writeMessage = async (state: string, id: string, ...rest: unknown[]) => {
      if (id === plain) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return real(state, id, ...rest);
    };
    const reason = 'requeue message failed: ENOSPC: no space left on device, write';
    expect(await q.cmd('requeue_errs', {})).toEqual(['fail', `1 of 2 messages were not requeued (${plain}: ${reason})`, { total: 2, done: 1, failed: 1, failures: [{ id: plain, reason }] }]);
    expect([await q.state(plain), await q.state(cancelled)]).toEqual(['err', 'que']);
  });

  it('ack_errs goes on past a rename that fails, and names it: a partial reply, never ok', async () => {
    q = await inProcessQueue();
    const { plain } = await twoErrs(q);
    const fs = q.queue.spool.fs as unknown as { rename: (from: string, to: string) => Promise<void> };
    const real = fs.rename.bind(fs);
    fs.rename = async (from: string, to: string) => {
      if (from.endsWith(`/err/${plain}`)) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      return real(from, to);
    };
    const reason = 'acknowledge message failed: EIO: i/o error, rename';
    expect(await q.cmd('ack_errs')).toEqual(['fail', `1 of 2 messages were not acknowledged (${plain}: ${reason})`, { total: 2, done: 1, failed: 1, failures: [{ id: plain, reason }] }]);
    fs.rename = real;
    // The one that failed is still there to acknowledge.
    expect(await q.cmd('ack_errs')).toEqual(['ok', 1]);
  });

  it('answers once the renames are durable: que/ and err/ fsynced after the last rename, before the reply', async () => {
    let rec: RecordingFs | null = null;
    q = await inProcessQueue({}, { fs: (root) => (rec = recordingFs(root)).fs });
    await twoErrs(q);
    rec!.clear();
    const reply = await q.cmd('requeue_errs', {});
    rec!.mark('answered');
    expect(reply).toEqual(['ok', 2]);
    const log = rec!.log;
    const lastRename = log.map((l) => / -> queues\/q\/que\//.test(l)).lastIndexOf(true);
    expect(lastRename).toBeGreaterThanOrEqual(0);
    for (const dir of ['queues/q/que', 'queues/q/err']) {
      const synced = log.indexOf(`fsynced ${dir}`, lastRename);
      expect(synced, `fsynced ${dir} after the last rename, before the answer, in\n${log.join('\n')}`).toBeGreaterThan(lastRename);
      expect(synced).toBeLessThan(log.indexOf('answered'));
    }
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
    ...nodeSpoolFs,
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
    q = await inProcessQueue({}, { paused: true });
    const m = await q.send();
    expect(await q.cmd('set_priority', { msg_id: m.msg_id, priority: -7, actor: 'cli:dan' })).toEqual(['ok', -7]);
    expect((await history(q, m.msg_id)).at(-1)).toEqual({ at: expect.any(String), event: 'priority', actor: 'cli:dan', priority: -7 });
  });

  it('of a prep message hold when it is committed', async () => {
    q = await inProcessQueue({}, { paused: true });
    const id = String((await q.cmd('prep_message', { dest: 'q' }))[1]).split('/').pop()!;
    const due = nowS(q) + 3600;
    expect(await q.cmd('reschedule_message', { msg_id: id, due })).toEqual(['ok', due]);
    expect(await q.cmd('set_priority', { msg_id: id, priority: -2 })).toEqual(['ok', -2]);
    expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['ok', 'msg commited']);
    expect(await view(q, id)).toMatchObject({ state: 'que', due, priority: -2, waiting: { reason: 'delayed', due } });
  });

  it('of a prep message committed during its write: the que message takes the change in memory as on disk', async () => {
    const gate = holdDirSync();
    q = await inProcessQueue({}, { paused: true, fs: () => gate.fs });
    const id = String((await q.cmd('prep_message', { dest: 'q' }))[1]).split('/').pop()!;
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
    q = await inProcessQueue({}, { paused: true });
    const dep = await q.send();
    const id = String((await q.cmd('create_message', { dest: 'q', depends: [`q/${dep.msg_id}`] }))[1]).split('/').pop()!;
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
