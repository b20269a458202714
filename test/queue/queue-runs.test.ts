// The queue core in-process (fake launcher, injected clock): dispatch order, limits, completion, kill, events.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type InProcess, inProcessQueue } from './in-process.js';
import { waitFor } from '../helpers/rq-root.js';

let q: InProcess | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await q?.close();
  q = null;
});

describe('dispatcher', () => {
  it('starts messages in due order, one at a time with one worker, the next when the script exits', async () => {
    q = await inProcessQueue();
    await fs.writeFile(path.join(q.root, 'config', 'q.pause'), '');
    q.queue.status();
    const later = await q.send({ param1: 'later', due: Math.floor(q.clock.ms / 1000) - 5 });
    const sooner = await q.send({ param1: 'sooner', due: Math.floor(q.clock.ms / 1000) - 10 });
    await fs.rm(path.join(q.root, 'config', 'q.pause'));
    q.queue.status();
    const first = await q.launcher.nth(0);
    expect(first.env.RQ_MSG_ID).toBe(sooner.msg_id);
    expect(q.launcher.started).toHaveLength(1);
    first.say('done');
    first.exit(0);
    const second = await q.launcher.nth(1);
    expect(second.env.RQ_MSG_ID).toBe(later.msg_id);
  });

  it('holds a message until its due, and starts it when the clock reaches it', async () => {
    q = await inProcessQueue();
    const due = Math.floor(q.clock.ms / 1000) + 3600;
    const m = await q.send({ due });
    expect(await q.state(m.msg_id)).toBe('que');
    expect(q.launcher.started).toHaveLength(0);
    q.clock.ms = due * 1000;
    q.queue.pump();
    expect((await q.launcher.nth(0)).env.RQ_MSG_ID).toBe(m.msg_id);
  });

  it('arms one timer for the earliest due: an earlier due re-arms it, a later one does not', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    q = await inProcessQueue();
    const now = Math.floor(q.clock.ms / 1000);
    const late = await q.send({ param1: 'late', due: now + 100 });
    const early = await q.send({ param1: 'early', due: now + 50 });
    await q.send({ param1: 'middle', due: now + 80 });
    // The statistics' 10 s flush and the create journal's checkpoint are the other timers: done now, it is the dispatcher's alone.
    await q.queue.stats.flush();
    await q.queue.spool.checkpoint();
    expect(vi.getTimerCount()).toBe(1);
    q.clock.ms += 49_000;
    vi.advanceTimersByTime(49_000);
    expect(q.launcher.started).toHaveLength(0);
    q.clock.ms += 1_000;
    vi.advanceTimersByTime(1_000);
    const s = await q.launcher.nth(0);
    expect(s.env.RQ_MSG_ID).toBe(early.msg_id);
    const end = q.next('finished');
    s.say('done');
    s.exit(0);
    await end;
    await q.queue.stats.flush();
    // The worker is free again and nothing else is due: one timer, for the middle message.
    expect(vi.getTimerCount()).toBe(1);
    q.clock.ms += 50_000;
    vi.advanceTimersByTime(50_000);
    const m = await q.launcher.nth(1);
    m.say('done');
    m.exit(0);
    q.clock.ms += 20_000;
    vi.advanceTimersByTime(20_000);
    expect((await q.launcher.nth(2)).env.RQ_MSG_ID).toBe(late.msg_id);
  });

  it('after stop nothing starts, not even a message already due', async () => {
    q = await inProcessQueue();
    await fs.writeFile(path.join(q.root, 'config', 'q.pause'), '');
    q.queue.status();
    await q.send();
    await q.queue.stop();
    await fs.rm(path.join(q.root, 'config', 'q.pause'));
    q.queue.pump();
    expect(q.queue.status()).toBe('UP');
    q.queue.pump();
    expect(q.launcher.started).toHaveLength(0);
  });

  it('runs num_workers at once and never more', async () => {
    q = await inProcessQueue({ num_workers: 2 });
    for (let i = 0; i < 3; i++) await q.send({ param1: String(i) });
    await q.launcher.nth(1);
    expect(q.launcher.started).toHaveLength(2);
    expect(q.queue.counts()).toMatchObject({ que: 1, run: 2 });
    q.launcher.started[0].say('done');
    q.launcher.started[0].exit(0);
    await q.launcher.nth(2);
    expect(q.launcher.started).toHaveLength(3);
  });

  it('blocking_params: a message whose param is running waits; another param starts beside it', async () => {
    q = await inProcessQueue({ num_workers: 3, blocking_params: [1] });
    await q.send({ param1: 'a' });
    const a2 = await q.send({ param1: 'a' });
    const b = await q.send({ param1: 'b' });
    const s1 = await q.launcher.nth(1);
    expect(s1.env.RQ_MSG_ID).toBe(b.msg_id);
    expect(q.launcher.started).toHaveLength(2);
    q.launcher.started[0].say('done');
    q.launcher.started[0].exit(0);
    expect((await q.launcher.nth(2)).env.RQ_MSG_ID).toBe(a2.msg_id);
  });
});

describe('runs and their end', () => {
  it('done: the message reaches done/, counts and events follow', async () => {
    q = await inProcessQueue();
    const finished = q.next('finished');
    const m = await q.send();
    const s = await q.launcher.nth(0);
    s.say('run step 1', 'done');
    s.exit(0);
    const f = await finished;
    expect(f.outcome).toEqual({ state: 'done', statusText: null });
    expect(await q.state(m.msg_id)).toBe('done');
    expect(q.queue.counts()).toMatchObject({ que: 0, run: 0, done: 1 });
    const history = await q.queue.spool.readHistory('done', m.msg_id);
    expect(history.map((h) => `${h.from}>${h.to}`)).toEqual(['null>que', 'que>run', 'run>done']);
  });

  it('resend N counts at once, returns to que with due now+N, and errs with the classic text at max_count', async () => {
    q = await inProcessQueue();
    const m = await q.send({ max_count: 2 });
    const now = Math.floor(q.clock.ms / 1000);
    let s = await q.launcher.nth(0);
    const back = q.next('finished');
    s.say('resend 60');
    s.exit(0);
    expect((await back).outcome.state).toBe('que');
    const queued = q.queue.index.queued(m.msg_id)!;
    expect(queued).toMatchObject({ count: 1, due: now + 60 });
    expect(JSON.parse(await fs.readFile(path.join(q.queue.spool.msgDir('que', m.msg_id), 'msg'), 'utf8'))).toMatchObject({ count: 1, due: now + 60 });
    q.clock.ms += 60_000;
    q.queue.pump();
    s = await q.launcher.nth(1);
    expect(s.env.RQ_COUNT).toBe('1');
    const end = q.next('finished');
    s.say('resend 60');
    s.exit(0);
    expect((await end).outcome).toEqual({ state: 'err', statusText: 'HIT MAX RESEND COUNT - MOVING TO ERR' });
    expect(await q.state(m.msg_id)).toBe('err');
  });

  it('a kill by signal after done ends in err with the wait status text; the first completion line wins', async () => {
    q = await inProcessQueue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    const end = q.next('finished');
    s.say('done', 'err');
    s.exit(null, 'SIGKILL');
    expect((await end).outcome.statusText).toBe(
      `PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was done but exit status was pid ${s.pid} SIGKILL (signal 9)`,
    );
    expect(await q.state(m.msg_id)).toBe('err');
  });

  it('destroy sends TERM to the group, then KILL after the grace when the script ignores it', async () => {
    q = await inProcessQueue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    s.onSignal = (sig) => sig === 'SIGKILL' && s.exit(null, 'SIGKILL');
    const end = q.next('finished');
    expect(q.queue.destroy(m.msg_id)).toBe(true);
    await end;
    expect(s.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(q.queue.destroy(m.msg_id)).toBe(false);
  });

  it('a missing script holds the queue in SCRIPTERROR with the message back in que; fixing it resumes', async () => {
    q = await inProcessQueue();
    const script = path.join(q.root, 'scripts', 'q-run');
    await fs.chmod(script, 0o644);
    const m = await q.send();
    expect(q.queue.status()).toBe('SCRIPTERROR');
    expect(await q.state(m.msg_id)).toBe('que');
    expect(q.launcher.started).toHaveLength(0);
    await fs.chmod(script, 0o755);
    expect(q.queue.status()).toBe('UP');
    expect((await q.launcher.nth(0)).env.RQ_MSG_ID).toBe(m.msg_id);
  });

  it('dup to its own queue answers ok with the copy, which has count 0 and the delay as due', async () => {
    q = await inProcessQueue();
    const m = await q.send({ param1: 'p' });
    const s = await q.launcher.nth(0);
    s.say('dup 30-x-q');
    const [reply] = await s.replies(1);
    expect(reply).toMatch(/^ok http:\/\/127\.0\.0\.1:3333\/q\/q\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/);
    const copyId = reply.split('/').pop()!;
    expect(q.queue.index.queued(copyId)).toMatchObject({ param1: 'p', count: 0, due: Math.floor(q.clock.ms / 1000) + 30 });
    expect(copyId).not.toBe(m.msg_id);
  });

  it('post_run_webhook: a finished message hands each URL to the webhook queue', async () => {
    q = await inProcessQueue();
    await q.send({ post_run_webhook: ['http://127.0.0.1:1/hook'] });
    const s = await q.launcher.nth(0);
    const end = q.next('finished');
    s.say('done');
    s.exit(0);
    await end;
    await q.queue.stop();
    expect(q.peerCalls).toHaveLength(1);
    expect(q.peerCalls[0]).toMatchObject({ queue: 'webhook', command: 'create_message', arg: { dest: 'webhook', param1: 'http://127.0.0.1:1/hook' } });
    expect(JSON.parse((q.peerCalls[0].arg as { param2: string }).param2)).toMatchObject({ state: 'done' });
  });

  it('post_run_webhook: a message the restart finishes to err (its cancel decided before a crash) is handed to the webhook queue too', async () => {
    q = await inProcessQueue();
    const m = await q.queue.ops.create({ dest: 'q', post_run_webhook: ['http://127.0.0.1:1/hook'] } as never, false);
    await q.stop();
    // The state a crash leaves between a cancel's msg write and its move: prep/, outcome decided.
    await q.queue.spool.writeMessage('prep', m.msg_id, { ...m, outcome: 'cancelled' });
    const root = q.root;
    q = await inProcessQueue({}, { root });
    expect(await q.state(m.msg_id)).toBe('err');
    const call = await waitFor(() => q!.peerCalls[0], 'the webhook of the recovered message');
    expect(call).toMatchObject({ queue: 'webhook', command: 'create_message', arg: { dest: 'webhook', param1: 'http://127.0.0.1:1/hook' } });
    expect(JSON.parse((call.arg as { param2: string }).param2)).toMatchObject({
      msg_id: `http://127.0.0.1:3333/q/q/${m.msg_id}`,
      state: 'err',
      outcome: 'cancelled',
    });
  });

  it('a run that fails inside rq (the disk refuses its move into run/) ends in err with a status naming the error; the next message still runs', async () => {
    q = await inProcessQueue();
    await fs.writeFile(path.join(q.root, 'config', 'q.pause'), '');
    q.queue.status();
    const m = await q.send();
    // Something already at run/<id>, not empty: the rename que → run fails with ENOTEMPTY.
    await fs.mkdir(path.join(q.queue.spool.paths.state.run, m.msg_id, 'in-the-way'), { recursive: true });
    const toErr = q.next('moved', (e) => e.id === m.msg_id && e.to === 'err');
    await fs.rm(path.join(q.root, 'config', 'q.pause'));
    q.queue.status();
    expect(await toErr).toMatchObject({ from: 'que', to: 'err', actor: 'rq' });
    await fs.rm(path.join(q.queue.spool.paths.state.run, m.msg_id), { recursive: true });
    // The worker is free again once the failed run is over: the next message starts.
    const next = await q.send();
    expect((await q.launcher.nth(0)).env.RQ_MSG_ID).toBe(next.msg_id);

    const text = /^rq internal error: move \S+ from que to run failed: ENOTEMPTY: directory not empty, rename /;
    const where = (await q.queue.ops.locate(m.msg_id))!;
    expect(where.state).toBe('err');
    expect((await q.queue.ops.statusView(m.msg_id, where)).status.replace(/^err - /, '')).toMatch(text);
    expect((await q.queue.spool.readHistory('err', m.msg_id)).at(-1)).toMatchObject({
      from: 'que',
      to: 'err',
      actor: 'rq',
      reason: expect.stringMatching(text),
    });
    expect(q.launcher.started).toHaveLength(1);
    expect(q.queue.counts()).toMatchObject({ que: 0, run: 1, err: 1 });
  });

  it('stop: the running script gets TERM, its message stays in run/ and is reported interrupted', async () => {
    q = await inProcessQueue();
    const m = await q.send();
    const s = await q.launcher.nth(0);
    const interrupted = q.next('interrupted');
    await q.queue.stop();
    expect(await interrupted).toEqual({ id: m.msg_id });
    // TERM, then KILL for whatever of its group outlived the leader, once the leader is reaped.
    expect(s.signals).toEqual(['SIGTERM', 'SIGKILL']);
    expect(await fs.readdir(q.queue.spool.paths.state.run)).toEqual([m.msg_id]);
  });
});
