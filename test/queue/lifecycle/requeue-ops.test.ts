// Requeue, requeue_errs and ack_errs in-process (rq-beyond §B6): what each leaves in memory, on disk and in the history, and when it answers.
import { describe, expect, it } from 'vitest';
import { recordingFs, type RecordingFs } from '../../helpers/recording-fs.js';
import type { InProcess } from '../in-process.js';
import { inProcessQueues } from '../in-process-session.js';
import { history, nowS, view } from './lifecycle-ops-harness.js';

const queue = inProcessQueues();

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
    const q = await queue({}, { paused: true });
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
    const q = await queue();
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
    const q = await queue();
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
    const q = await queue();
    const { plain, cancelled } = await twoErrs(q);
    expect(await q.cmd('requeue_errs', { group: 'cancelled' })).toEqual(['ok', 1]);
    expect([await q.state(plain), await q.state(cancelled)]).toEqual(['err', 'que']);
    expect(await q.cmd('requeue_errs', { outcome: 'failed' })).toEqual(['ok', 1]);
    expect(await q.state(plain)).toBe('que');
  });

  it('a message whose write fails (a full disk) is named in a partial reply, never dropped from the count unsaid; the others are requeued', async () => {
    const q = await queue();
    const { plain, cancelled } = await twoErrs(q);
    const spool = q.queue.spool as unknown as { writeMessage: (state: string, id: string, ...rest: unknown[]) => Promise<void> };
    const real = spool.writeMessage.bind(spool);
    spool.writeMessage = async (state: string, id: string, ...rest: unknown[]) => {
      if (id === plain) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return real(state, id, ...rest);
    };
    const reason = 'requeue message failed: ENOSPC: no space left on device, write';
    expect(await q.cmd('requeue_errs', {})).toEqual([
      'fail',
      `1 of 2 messages were not requeued (${plain}: ${reason})`,
      { total: 2, done: 1, failed: 1, failures: [{ id: plain, reason, code: 'RQ_ERR_DISK' }] },
    ]);
    expect([await q.state(plain), await q.state(cancelled)]).toEqual(['err', 'que']);
  });

  it('takes the oldest first whatever order err/ lists them in', async () => {
    const q = await queue({}, { paused: true });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      // A clock set back between sends: each message is newer on disk than its id says, so err/ lists the youngest ids first.
      q.clock.ms -= 1000;
      ids.push((await q.send()).msg_id);
    }
    for (const id of ids) await q.cmd('cancel_message', { msg_id: id });
    expect(await q.cmd('requeue_errs', { limit: 5 })).toEqual(['ok', 5]);
    const states = await Promise.all(ids.map((id) => q.state(id)));
    expect(states).toEqual(ids.map((_, i) => (i >= 15 ? 'que' : 'err')));
    expect(await q.cmd('requeue_errs', {})).toEqual(['ok', 15]);
    expect(await q.cmd('num_messages')).toMatchObject({ que: 20, err: 0 });
  });

  it('ack_errs goes on past a rename that fails, and names it: a partial reply, never ok', async () => {
    const q = await queue();
    const { plain } = await twoErrs(q);
    const fs = q.queue.spool.fs as unknown as { rename: (from: string, to: string) => Promise<void> };
    const real = fs.rename.bind(fs);
    fs.rename = async (from: string, to: string) => {
      if (from.endsWith(`/err/${plain}`)) throw Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
      return real(from, to);
    };
    const reason = 'acknowledge message failed: EIO: i/o error, rename';
    expect(await q.cmd('ack_errs')).toEqual([
      'fail',
      `1 of 2 messages were not acknowledged (${plain}: ${reason})`,
      { total: 2, done: 1, failed: 1, failures: [{ id: plain, reason, code: 'RQ_ERR_DISK' }] },
    ]);
    fs.rename = real;
    // The one that failed is still there to acknowledge.
    expect(await q.cmd('ack_errs')).toEqual(['ok', 1]);
  });

  it('answers once the renames are durable: que/ and err/ fsynced after the last rename, before the reply', async () => {
    let rec: RecordingFs | null = null;
    const q = await queue({}, { fs: (root) => (rec = recordingFs(root)).fs });
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
