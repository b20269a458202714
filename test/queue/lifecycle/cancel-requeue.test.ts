// Cancel from prep, que and run, requeue from err, and history (rq-beyond §B5, §B6, §B14) on a real queue process.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, pidInFile } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
let coal: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'cq', { num_workers: 2, extra: { kill_grace: 0.3 } });
  await addQueue(t.root, 'coal', { num_workers: 1, coalesce_params: [1] });
  q = await QueueProc.start(t.root, 'cq');
  coal = await QueueProc.start(t.root, 'coal');
});
afterAll(async () => {
  await Promise.all([q?.stop(), coal?.stop()]);
  await t?.cleanup();
});

describe('cancel', () => {
  it('a queued message ends in err at once: outcome cancelled, status CANCELLED - <reason>, never run', async () => {
    const id = await q.send({ param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(await q.cmd('cancel_message', { msg_id: id, reason: 'not needed', actor: 'cli:alice' })).toEqual(['ok', 'msg cancelled']);
    const m = (await q.cmd('get_message', { msg_id: id }))[1];
    expect(m).toMatchObject({ state: 'err', status: 'err - CANCELLED - not needed', outcome: 'cancelled', cancel: { by: 'cli:alice', reason: 'not needed' } });
    expect(m.failures).toBeUndefined();
    const history = (await q.cmd('get_history', { msg_id: id }))[1];
    expect(history.map((l: { from?: string; to?: string; actor?: string }) => [l.from, l.to, l.actor])).toEqual([
      [null, 'que', 'create'],
      ['que', 'err', 'cli:alice'],
    ]);
  });

  it('a prep message ends in err too; the default reason names who asked', async () => {
    const r = await q.cmd('prep_message', { dest: 'cq', param1: 'done' });
    const id = String(r[1]).split('/').pop()!;
    expect(await q.cmd('cancel_message', { msg_id: id })).toEqual(['ok', 'msg cancelled']);
    expect((await q.cmd('get_message', { msg_id: id }))[1]).toMatchObject({ state: 'err', status: 'err - CANCELLED - by socket' });
    expect(await q.cmd('messages', { state: 'prep' })).not.toContain(id);
  });

  it('a running message: TERM to its group, err cancelled, never retried whatever max_retries', async () => {
    const pidFile = path.join(t.root, 'cancel-run.pid');
    const id = await q.send({ param1: 'forever', param2: pidFile, max_retries: 5 });
    const pid = await pidInFile(pidFile);
    expect(await q.cmd('cancel_message', { msg_id: id, reason: 'operator' })).toEqual(['ok', 'msg cancelling']);
    const m = await q.waitState(id, ['err', 'que', 'done']);
    expect(m).toMatchObject({ state: 'err', status: 'err - CANCELLED - operator', outcome: 'cancelled' });
    expect(m.failures).toBeUndefined();
    expect(alive(pid)).toBe(false);
    const events = (await q.cmd('get_history', { msg_id: id }))[1].map((l: { event?: string; from?: string; to?: string }) => l.event ?? `${l.from}→${l.to}`);
    expect(events).toEqual(['null→que', 'que→run', 'cancel_requested', 'run→err']);
  });

  it('a script that ignores TERM is killed after kill_grace', async () => {
    const pidFile = path.join(t.root, 'cancel-stubborn.pid');
    const id = await q.send({ param1: 'stubborn', param2: pidFile });
    const pid = await pidInFile(pidFile);
    expect((await q.cmd('cancel_message', { msg_id: id }))[1]).toBe('msg cancelling');
    expect((await q.waitState(id, ['err'])).outcome).toBe('cancelled');
    expect(alive(pid)).toBe(false);
  });

  it('a coalesced message leaves its running parent, which then finishes without it', async () => {
    // Coalescing folds queued look-alikes into a message when it starts: A runs, B and C wait, B starts and folds C.
    const a = await coal.send({ param1: 'slow', param2: '0.5' });
    await coal.waitState(a, ['run']);
    const b = await coal.send({ param1: 'slow', param2: '1' });
    const c = await coal.send({ param1: 'slow', param2: '1' });
    await coal.waitState(b, ['run']);
    const folded = (await coal.cmd('get_message', { msg_id: c }))[1];
    expect(folded.dup).toMatch(new RegExp(`/q/coal/${b}$`));
    expect(folded.waiting).toEqual({ reason: 'coalesced', into: folded.dup });
    expect(await coal.cmd('waiting', { reason: 'coalesced' })).toEqual(['ok', [{ msg_id: c, reason: 'coalesced', into: folded.dup }]]);
    // Deleting it is refused (its parent carries it) and it stays: only cancel takes it out.
    expect(await coal.cmd('delete_message', { msg_id: c })).toEqual(['fail', 'msg not deleted: msg is coalesced into a running message']);
    expect(await coal.state(c)).toBe('que');
    expect(await coal.cmd('cancel_message', { msg_id: c })).toEqual(['ok', 'msg cancelled']);
    expect((await coal.cmd('get_message', { msg_id: c }))[1]).toMatchObject({ state: 'err', outcome: 'cancelled' });
    const parent = await coal.waitState(b, ['done']);
    expect(parent.dups).toBeUndefined();
    expect(await coal.state(c)).toBe('err');
  });

  it('a finished message is refused with its state; nothing changes', async () => {
    const id = await q.send({ param1: 'done' });
    await q.waitState(id, ['done']);
    expect(await q.cmd('cancel_message', { msg_id: id })).toEqual(['fail', 'msg already finished (done)']);
    expect(await q.cmd('cancel_message', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'msg not found']);
    expect(await q.cmd('cancel_message', { msg_id: id, reason: 'x'.repeat(1001) })).toEqual([
      'fail',
      'reason: expected text of at most 1000 characters without NUL, received 1001 characters',
    ]);
    expect(await q.state(id)).toBe('done');
  });
});

describe('cancel racing the end of a run', () => {
  // A cancel that lands while a run's end is being decided (retry, resend) must still stop the
  // message for good: an acknowledged cancel is never followed by another run (rq-beyond §B17).
  it('every acknowledged cancel ends in err cancelled, whenever it lands', async () => {
    const outcomes = new Map<string, number>();
    for (let n = 0; n < 60; n++) {
      const id = await q.send({ param1: 'flaky', param2: '99', max_retries: 1, backoff_base: 0.2, min_retry_delay: 0.2, retry_jitter: 0 });
      let reply: unknown[] = [];
      for (let i = 0; i < 2000 && reply[0] !== 'ok'; i++) reply = await q.cmd('cancel_message', { msg_id: id });
      const m = await q.waitState(id, ['err', 'done']);
      if (reply[0] !== 'ok') {
        // On a loaded machine both runs may be over before the first cancel lands: then it is refused, not acknowledged.
        expect({ reply, outcome: m.outcome }).toEqual({ reply: ['fail', 'msg already finished (err)'], outcome: 'exhausted' });
        continue;
      }
      outcomes.set(String(m.outcome), (outcomes.get(String(m.outcome)) ?? 0) + 1);
      // An attempt refused while the run's end was being decided may be followed by the retry's run;
      // what must never follow is a run after the cancel that was acknowledged (its marker or its move to err).
      const h = (await q.cmd('get_history', { msg_id: id }))[1] as { to?: string; event?: string }[];
      const cancelAt = h.findIndex((l) => l.event === 'cancel_requested' || l.to === 'err');
      const starts = ((await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8')).match(/RQ START/g) ?? []).length;
      expect({ outcome: m.outcome, runsAfterCancel: h.slice(cancelAt).filter((l) => l.to === 'run').length, starts }).toEqual({
        outcome: 'cancelled',
        runsAfterCancel: 0,
        starts: h.filter((l) => l.to === 'run').length,
      });
    }
    expect([...outcomes.keys()]).toEqual(['cancelled']);
  }, 60_000);
});

describe('reschedule', () => {
  it("moves a queued message's due (durably) and runs it then; refuses a finished one", async () => {
    const id = await q.send({ param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    const r = await q.cmd('reschedule_message', { msg_id: id, delay: 0, actor: 'cli:carol' });
    expect(r[0]).toBe('ok');
    expect(Math.abs(r[1] - Date.now() / 1000)).toBeLessThan(5);
    const m = await q.waitState(id, ['done']);
    const lines = (await q.cmd('get_history', { msg_id: id }))[1];
    expect(lines.find((l: { event?: string }) => l.event === 'reschedule')).toMatchObject({ actor: 'cli:carol', due: r[1] });
    expect(await q.cmd('reschedule_message', { msg_id: id, delay: 5 })).toEqual(['fail', 'msg not in que or prep (done)']);
    expect(await q.cmd('reschedule_message', { msg_id: id })).toEqual(['fail', "lacking 'due' field"]);
    expect(m.state).toBe('done');
  });

  it('a prep message keeps its new due when committed', async () => {
    const id = String((await q.cmd('prep_message', { dest: 'cq', param1: 'done' }))[1])
      .split('/')
      .pop()!;
    const due = Math.floor(Date.now() / 1000) + 7200;
    expect(await q.cmd('reschedule_message', { msg_id: id, due })).toEqual(['ok', due]);
    await q.cmd('commit_message', { msg_id: id });
    expect((await q.cmd('get_message', { msg_id: id }))[1]).toMatchObject({ state: 'que', due });
    await q.cmd('cancel_message', { msg_id: id });
  });
});

describe('requeue', () => {
  it('an exhausted message goes back to que under its own id, outcome cleared, failures kept; reset zeroes them', async () => {
    const id = await q.send({ param1: 'flaky', param2: '3', max_retries: 1, backoff_base: 0.05, min_retry_delay: 0, retry_jitter: 0 });
    expect((await q.waitState(id, ['err'])).outcome).toBe('exhausted');
    const before = (await q.cmd('num_messages')).err;
    expect(await q.cmd('requeue_message', { msg_id: id, actor: 'cli:bob' })).toEqual(['ok', 'msg requeued']);
    // failures 2 already: attempt 3 succeeds, so the requeued run ends done.
    const m = await q.waitState(id, ['done', 'err']);
    expect(m).toMatchObject({ state: 'done', status: 'done - on attempt 3', failures: 2 });
    expect(m.outcome).toBeUndefined();
    expect((await q.cmd('num_messages')).err).toBe(before - 1);
    const lines = (await q.cmd('get_history', { msg_id: id }))[1];
    expect(lines.find((l: { from?: string; to?: string }) => l.from === 'err' && l.to === 'que')).toMatchObject({ actor: 'cli:bob' });

    const again = await q.send({ param1: 'flaky', param2: '2', max_retries: 0 });
    expect((await q.waitState(again, ['err'])).status).toBe('err - attempt 1 failed');
    expect(await q.cmd('requeue_message', { msg_id: again, reset: true, delay: 0 })).toEqual(['ok', 'msg requeued']);
    expect((await q.waitState(again, ['done', 'err'])).status).toBe('err - attempt 1 failed');
  });

  it('an acknowledged err message can be requeued too', async () => {
    const id = await q.send({ param1: 'err' });
    await q.waitState(id, ['err']);
    await q.cmd('ack_errs');
    expect(await q.state(id)).toMatch(/^missing/);
    expect(await q.cmd('requeue_message', { msg_id: id, due: Math.floor(Date.now() / 1000) + 3600 })).toEqual(['ok', 'msg requeued']);
    expect(await q.state(id)).toBe('que');
    expect(await q.cmd('cancel_message', { msg_id: id })).toEqual(['ok', 'msg cancelled']);
  });

  it('refuses what is not in err, and due with delay', async () => {
    const id = await q.send({ param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(await q.cmd('requeue_message', { msg_id: id })).toEqual(['fail', 'msg not in err (que)']);
    expect(await q.cmd('requeue_message', { msg_id: id, due: 1, delay: 1 })).toEqual(['fail', 'give due or delay, not both']);
    expect(await q.cmd('requeue_message', { msg_id: id, delay: -5 })).toEqual([
      'fail',
      'delay: expected seconds >= 0, ending by 253402300799 (the end of year 9999), received -5',
    ]);
    expect(await q.cmd('requeue_message', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'msg not found']);
    await q.cmd('cancel_message', { msg_id: id });
  });
});
