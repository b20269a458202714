// The one owner of a running message's moves: que → run at its start, and every way out of run/ (resend, retry, done, relayed, err, back unstarted).
import type { Message } from '../../message/message.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { Coalescer } from '../coordination/coalescing.js';
import type { MessageIndex } from '../index/message-index.js';
import type { ScriptRun } from '../launch/script-run.js';
import type { Decision, Failure } from '../rules/retry-policy.js';
import type { RunEndSpool } from '../status/disk-full.js';
import { type Finish, finishToErr, lastFailure } from './finish.js';

export interface RunMovesDeps {
  spool: QueueSpool;
  /** The spool as a run's end writes it: on a full disk each write waits for space rather than failing the run. */
  ends: RunEndSpool;
  index: MessageIndex;
  coalescer: Coalescer;
  now: () => number;
}

/**
 * Each way out of run/ makes its writes durable in run/ first (§B0.3: status, then `msg`), then
 * renames; memory (the run, the que, the counts, the folded messages) follows the rename at once,
 * so nobody sees the message where it no longer is; the rename's directory sync comes last.
 */
export class RunMoves {
  constructor(private readonly d: RunMovesDeps) {}

  /** A run begins: memory holds it before anything can fail, so its end always finds it. */
  begin(run: ScriptRun): void {
    this.d.index.addRun(run);
  }

  /**
   * que → run, synchronously: rename, mkdir and the rest are each a few microseconds, while a
   * thread-pool round trip per step would add up in commit-to-start latency. The queued messages
   * with the same coalesce params fold into it first. The que → run history line waits for the
   * spawn, so it can say which pid ran which attempt (§B14).
   */
  start(run: ScriptRun): string {
    for (const m of this.d.coalescer.foldable(run.msg)) {
      this.d.index.fold(m, this.d.spool.fullId(run.id));
      run.dups.push(m);
    }
    if (run.dups.length) run.msg.dups = run.dups.map((m) => m.msg_id);
    run.dir = this.d.spool.moveNow(run.id, 'que', 'run', { actor: 'dispatcher', lineLater: true }).dir;
    return run.dir;
  }

  /** The script could not start (or its start found no space): back to que as it came, its folded messages with it. */
  backToQue(run: ScriptRun, reason: string): void {
    if (run.dir) this.d.spool.moveNow(run.id, 'run', 'que', { actor: 'dispatcher', reason });
    this.unfold(run);
    this.d.index.removeRun(run.id);
    this.d.index.enqueue(run.msg);
  }

  /** Refused before it left que/: back in the que's order, nothing on disk changed. */
  notStarted(msg: Message): void {
    this.d.index.enqueue(msg);
  }

  /** A resend (spec §3.4): `msg` with its new due in run/, then run → que. */
  async resend(run: ScriptRun, delay: number, details: Record<string, unknown>): Promise<void> {
    const { ends } = this.d;
    run.msg.due = Math.floor(this.d.now() / 1000) + delay;
    await ends.writeMessage('run', run.id, run.msg);
    const moved = await ends.beginMove(run.id, 'run', 'que', { actor: 'script', details, reason: `resend ${delay}` });
    this.backInQue(run);
    await moved.sync();
  }

  /**
   * A retry (rq-beyond §B3.3): the status text and `msg` are durable in run/ before the rename, so
   * a kill -9 in between re-queues a message whose `msg` already says what was decided. The status
   * goes first: if only it lands, recovery re-queues the message and the next run overwrites it.
   */
  async retry(run: ScriptRun, failure: Failure, decision: Extract<Decision, { action: 'retry' }>, details: Record<string, unknown>): Promise<void> {
    const { ends } = this.d;
    const msg = run.msg;
    const now = this.d.now();
    await ends.writeStatus(run.dir!, decision.status, true);
    msg.failures = decision.attempt;
    msg.last_failure = lastFailure(failure, now);
    msg.due = Math.round(now + decision.delay * 1000) / 1000;
    await ends.writeMessage('run', run.id, msg);
    const moved = await ends.beginMove(run.id, 'run', 'que', {
      actor: 'retry',
      details: { failure: failure.kind, retry: decision.attempt, of: decision.of, delay_s: decision.delay, due: msg.due, ...details },
      reason: failure.text,
    });
    this.backInQue(run);
    await moved.sync();
  }

  /** run → done or relayed, its folded messages finished with it; or run → err as the classic rules say, its folded ones back to the que. */
  async finish(run: ScriptRun, state: 'done' | 'relayed' | 'err', reason: string, details: Record<string, unknown>): Promise<void> {
    if (state === 'err') this.unfold(run);
    else await this.finishFolded(run, state);
    const moved = await this.d.ends.beginMove(run.id, 'run', state, { actor: 'script', details, reason });
    // Memory, counts included, follows the rename at once: a reader who sees the message in its new state sees it counted.
    this.d.index.removeRun(run.id);
    this.d.index.addFinished(state, 1);
    await moved.sync();
  }

  /** run → err with an outcome (a failure not retried, a cancel), or removed with `purge`. */
  async toErr(run: ScriptRun, f: Finish): Promise<void> {
    this.unfold(run);
    await finishToErr({ ...this.d, spool: this.d.ends }, run.id, 'run', run.msg, f, () => this.d.index.removeRun(run.id));
  }

  /** A run that could not proceed (rq's own error): to err from wherever it got to, with a status saying why. */
  async fail(run: ScriptRun, text: string): Promise<void> {
    this.unfold(run);
    const { ends } = this.d;
    const from = run.dir ? 'run' : 'que';
    await ends.writeStatus(ends.msgDir(from, run.id), text, true);
    await ends.move(run.id, from, 'err', { actor: 'rq', reason: text });
    this.d.index.addFinished('err', 1);
  }

  /** The run is over: memory lets go of it, unless a retry or resend with no delay already runs again under the same id. */
  ended(run: ScriptRun): void {
    if (this.d.index.run(run.id) === run) this.d.index.removeRun(run.id);
  }

  /** A coalesced message leaves its running parent's fold (a cancel), so the parent's end no longer carries it. */
  unfoldOne(id: string): Message | undefined {
    for (const run of this.d.index.allRuns()) {
      const i = run.dups.findIndex((m) => m.msg_id === id);
      if (i < 0) continue;
      const [msg] = run.dups.splice(i, 1);
      if (run.dups.length) run.msg.dups = run.dups.map((m) => m.msg_id);
      else delete run.msg.dups;
      this.d.index.dropFolded(id);
      delete msg.dup;
      return msg;
    }
    return undefined;
  }

  /** run → que in memory: the run gone, its folded messages and itself back in the que's order. */
  private backInQue(run: ScriptRun): void {
    this.d.index.removeRun(run.id);
    this.unfold(run);
    this.d.index.enqueue(run.msg);
  }

  /** The run did not end well (err, resend, retry, refused): its folded messages go back to the que. */
  private unfold(run: ScriptRun): void {
    for (const m of run.dups) this.d.index.unfold(m);
    if (run.dups.length) delete run.msg.dups;
    run.dups = [];
  }

  /**
   * The run ended done or relayed: so do its folded messages, each with a status naming the parent
   * (spec §3.5). Through `ends`, like the parent's own writes: a full disk makes them wait, where a
   * refusal would have sent a run its script finished to err.
   */
  private async finishFolded(run: ScriptRun, state: 'done' | 'relayed'): Promise<void> {
    if (!run.dups.length) return;
    const { spool, ends, index } = this.d;
    const parent = spool.fullId(run.id);
    const finished: string[] = [];
    // Each leaves run.dups once moved: should a later one fail (EIO; no room only waits, and a stop then unfolds none), the run's failure (fail) unfolds only those still in que/.
    while (run.dups.length) {
      const m = run.dups[0];
      await ends.writeStatus(ends.msgDir('que', m.msg_id), `duplicate ${parent}`, true);
      await ends.writeMessage('que', m.msg_id, m);
      await ends.move(m.msg_id, 'que', state, { actor: 'coalesce', reason: `duplicate ${parent}` });
      run.dups.shift();
      finished.push(spool.fullId(m.msg_id));
      index.dropFolded(m.msg_id);
      index.addFinished(state, 1);
    }
    run.msg.dups = finished;
    await ends.writeMessage('run', run.id, run.msg);
  }
}
