// RunMoves (a run's moves) on a real spool in a temp dir and a real MessageIndex: que → run with its coalesced messages, and each way out of run/ with its files, history, memory and counts.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { QueueConfig } from '../../../src/config/queue-config.js';
import { Coalescer } from '../../../src/queue/coordination/coalescing.js';
import { MessageIndex } from '../../../src/queue/index/message-index.js';
import { ScriptRun } from '../../../src/queue/launch/script-run.js';
import { RunMoves } from '../../../src/queue/transitions/run-moves.js';
import { type TempSpool, caught, tempSpool } from '../../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
const log = pino({ level: 'silent' });

let t: TempSpool;
let index: MessageIndex;
let moves: RunMoves;
/** The spool's moved notes, as observers hear them. */
let moved: { from: string; to: string; actor: string }[];

beforeEach(async () => {
  moved = [];
  t = await tempSpool('test', { now: () => T0, onMoved: (m) => void moved.push({ from: m.from, to: m.to, actor: m.actor }) });
  index = new MessageIndex(() => T0);
  index.setFinished('err', 5);
  const config = () => ({ coalesce_params: [1] }) as unknown as QueueConfig;
  moves = new RunMoves({
    spool: t.spool,
    ends: t.spool,
    index,
    coalescer: new Coalescer({ index, config }),
    now: () => T0,
  });
});
afterEach(() => t.cleanup());

const queued = async (param1: string) => {
  const m = await t.spool.create({ dest: 'test', param1 }, { commit: true });
  index.enqueue(m);
  return m;
};
/** The head of the que taken and started, as the dispatcher does. */
const started = async (param1 = 'a', others: string[] = []) => {
  const m = await queued(param1);
  const folded = [];
  for (const p of others) folded.push(await queued(p));
  index.dequeue(m.msg_id);
  const run = new ScriptRun(m, log, T0);
  moves.begin(run);
  moves.start(run);
  return { run, folded };
};
const lastLine = async (state: 'que' | 'err' | 'done' | 'run', id: string) => (await t.spool.readHistory(state, id)).at(-1);

describe('start', () => {
  it('que → run on disk, held as a run; queued messages with the same coalesce params fold into it, others stay', async () => {
    const { run, folded } = await started('a', ['a', 'b', 'a']);
    expect(run.dir).toBe(t.spool.msgDir('run', run.id));
    // The que → run line waits for the spawn (it names the pid): the move writes none.
    expect((await t.spool.readHistory('run', run.id)).map((l) => l.actor)).toEqual(['create']);
    expect(index.liveState(run.id)).toBe('run');
    expect(moved).toEqual([{ from: 'que', to: 'run', actor: 'dispatcher' }]);
    expect(run.dups.map((m) => m.msg_id)).toEqual([folded[0].msg_id, folded[2].msg_id]);
    expect(run.msg.dups).toEqual([folded[0].msg_id, folded[2].msg_id]);
    expect(folded[0].dup).toBe(t.spool.fullId(run.id));
    expect([index.isCoalesced(folded[0].msg_id), index.isQueued(folded[1].msg_id)]).toEqual([true, true]);
  });

  it('alone, it has no dups', async () => {
    const { run } = await started('a', ['b']);
    expect(run.dups).toEqual([]);
    expect(run.msg).not.toHaveProperty('dups');
  });
});

describe('back to the que', () => {
  it('backToQue: run → que on disk with the reason, its folded messages and itself back in order', async () => {
    const { run, folded } = await started('a', ['a']);
    moves.backToQue(run, 'could not start');
    expect(await t.spool.exists('que', run.id)).toBe(true);
    expect(await lastLine('que', run.id)).toMatchObject({ from: 'run', to: 'que', actor: 'dispatcher', reason: 'could not start' });
    expect([index.isQueued(run.id), index.isQueued(folded[0].msg_id), index.run(run.id)]).toEqual([true, true, undefined]);
    expect(run.msg).not.toHaveProperty('dups');
    expect(run.dups).toEqual([]);
  });

  it('backToQue of a run refused before its rename leaves the disk alone', async () => {
    const m = await queued('a');
    index.dequeue(m.msg_id);
    const run = new ScriptRun(m, log, T0);
    moves.begin(run);
    moves.backToQue(run, 'refused');
    expect((await t.spool.readHistory('que', m.msg_id)).map((l) => l.actor)).toEqual(['create']);
    expect(index.isQueued(m.msg_id)).toBe(true);
  });

  it('notStarted puts it back in the que', async () => {
    const m = await queued('a');
    index.dequeue(m.msg_id);
    moves.notStarted(m);
    expect(index.isQueued(m.msg_id)).toBe(true);
  });

  it('resend: msg with its new due in que/, its history names the delay, memory has it queued again', async () => {
    const { run, folded } = await started('a', ['a']);
    await moves.resend(run, 30, { exit: 0 });
    const due = Math.floor(T0 / 1000) + 30;
    expect(await t.spool.readMessage('que', run.id)).toMatchObject({ due });
    expect(await lastLine('que', run.id)).toMatchObject({ from: 'run', to: 'que', actor: 'script', reason: 'resend 30', exit: 0 });
    expect(index.queued(run.id)?.due).toBe(due);
    expect([index.run(run.id), index.isQueued(folded[0].msg_id)]).toEqual([undefined, true]);
  });

  it('retry: status, failures, last_failure and due written before the rename; the history line says what was decided', async () => {
    const { run } = await started();
    await moves.retry(
      run,
      { kind: 'exit', text: 'exit 3', code: 3, signal: null },
      { action: 'retry', attempt: 1, of: 3, delay: 2.5, status: 'RETRY 1/3 IN 2.5s - exit 3' },
      { exit: 3 },
    );
    const due = Math.round(T0 + 2500) / 1000;
    expect(await t.spool.readStatus('que', run.id)).toEqual({ job_status: 'RETRY 1/3 IN 2.5s - exit 3' });
    expect(await t.spool.readMessage('que', run.id)).toMatchObject({
      failures: 1,
      due,
      last_failure: { kind: 'exit', text: 'exit 3', code: 3, at: new Date(T0).toISOString() },
    });
    expect(await lastLine('que', run.id)).toMatchObject({
      from: 'run',
      to: 'que',
      actor: 'retry',
      reason: 'exit 3',
      failure: 'exit',
      retry: 1,
      of: 3,
      delay_s: 2.5,
      due,
      exit: 3,
    });
    expect(index.queued(run.id)?.failures).toBe(1);
    expect(index.run(run.id)).toBeUndefined();
  });
});

describe('finish', () => {
  it('done: counted at once, folded messages finished with it naming the parent, the parent lists them', async () => {
    const { run, folded } = await started('a', ['a']);
    const [dup] = folded.map((m) => m.msg_id);
    await moves.finish(run, 'done', 'done', { exit: 0 });
    expect(await lastLine('done', run.id)).toMatchObject({ from: 'run', to: 'done', actor: 'script', reason: 'done', exit: 0 });
    expect(await t.spool.readStatus('done', dup)).toEqual({
      job_status: `duplicate ${t.spool.fullId(run.id)}`,
    });
    expect(await t.spool.readMessage('done', dup)).toMatchObject({ dup: t.spool.fullId(run.id) });
    expect(await lastLine('done', dup)).toMatchObject({
      from: 'que',
      to: 'done',
      actor: 'coalesce',
      reason: `duplicate ${t.spool.fullId(run.id)}`,
    });
    expect(await t.spool.readMessage('done', run.id)).toMatchObject({ dups: [t.spool.fullId(dup)] });
    expect(index.counts()).toMatchObject({ run: 0, que: 0, done: 2 });
    expect(index.liveState(dup)).toBeNull();
  });

  it('relayed, alone: counted in relayed, msg untouched', async () => {
    const { run } = await started();
    await moves.finish(run, 'relayed', 'relayed', {});
    expect(index.counts()).toMatchObject({ run: 0, relayed: 1, done: 0 });
    expect(await t.spool.readMessage('relayed', run.id)).not.toHaveProperty('dups');
  });

  it('err the classic way: its folded messages go back to the que', async () => {
    const { run, folded } = await started('a', ['a']);
    await moves.finish(run, 'err', 'exit 1', { exit: 1 });
    expect(await t.spool.exists('err', run.id)).toBe(true);
    expect(index.counts()).toMatchObject({ run: 0, que: 1, err: 6 });
    expect(index.isQueued(folded[0].msg_id)).toBe(true);
  });

  it('toErr: status and outcome written, the run let go once renamed, its folded ones back in the que', async () => {
    const { run, folded } = await started('a', ['a']);
    await moves.toErr(run, {
      status: 'FAILED',
      outcome: 'failed',
      actor: 'script',
      failure: { kind: 'timeout', text: 'TIMEOUT', code: null, signal: 'SIGTERM' },
    });
    expect(await t.spool.readMessage('err', run.id)).toMatchObject({
      outcome: 'failed',
      failures: 1,
      last_failure: { kind: 'timeout', signal: 'SIGTERM' },
    });
    expect((await t.spool.readMessage('err', run.id)).last_failure).not.toHaveProperty('code');
    expect(index.counts()).toMatchObject({ run: 0, que: 1, err: 6 });
    expect(index.isQueued(folded[0].msg_id)).toBe(true);
  });

  it('toErr with purge removes it and lets the run go', async () => {
    const { run } = await started();
    await moves.toErr(run, { status: 'CANCELLED', outcome: 'cancelled', actor: 'cancel', purge: true });
    expect(await t.spool.locate(run.id)).toBeNull();
    expect(index.counts()).toMatchObject({ run: 0, err: 5 });
  });

  it('fail: from run/ (or from que/ when it never got there) to err with the status saying why', async () => {
    const { run } = await started('a', ['a']);
    await moves.fail(run, 'rq could not write');
    expect(await t.spool.readStatus('err', run.id)).toEqual({ job_status: 'rq could not write' });
    expect(await lastLine('err', run.id)).toMatchObject({ from: 'run', to: 'err', actor: 'rq', reason: 'rq could not write' });
    expect(index.counts()).toMatchObject({ que: 1, err: 6 });
    const m = await queued('b');
    index.dequeue(m.msg_id);
    await moves.fail(new ScriptRun(m, log, T0), 'no room');
    expect(await lastLine('err', m.msg_id)).toMatchObject({ from: 'que', to: 'err' });
    expect(index.counts().err).toBe(7);
  });

  it('a failed rename leaves the run in memory', async () => {
    const { run } = await started();
    await t.spool.move(run.id, 'run', 'que', { actor: 'elsewhere' });
    await caught(moves.finish(run, 'done', 'done', {}));
    expect(index.run(run.id)).toBe(run);
    expect(index.counts().done).toBe(0);
  });
});

describe('ended and unfoldOne', () => {
  it('ended lets go of the run, but not of a new run under the same id', async () => {
    const { run } = await started();
    const again = new ScriptRun(run.msg, log, T0);
    moves.begin(again);
    moves.ended(run);
    expect(index.run(run.id)).toBe(again);
    moves.ended(again);
    expect(index.run(run.id)).toBeUndefined();
  });

  it('unfoldOne takes one folded message out of its parent, which keeps the others; the last leaves no dups', async () => {
    const { run, folded } = await started('a', ['a', 'a']);
    const [x, y] = folded.map((m) => m.msg_id);
    const out = moves.unfoldOne(y);
    expect(out?.msg_id).toBe(y);
    expect(out).not.toHaveProperty('dup');
    expect(run.msg.dups).toEqual([x]);
    expect([index.liveState(y), index.isCoalesced(x)]).toEqual([null, true]);
    moves.unfoldOne(x);
    expect(run.msg).not.toHaveProperty('dups');
    expect(moves.unfoldOne('nobody')).toBeUndefined();
  });
});
