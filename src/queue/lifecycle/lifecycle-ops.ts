// Cancel from any live state, requeue from err, reschedule and re-prioritise waiting messages, expire, history (rq-beyond §B4–§B7, §B14).
import type { Logger } from 'pino';
import { RqError } from '../../errors.js';
import { type CancelRecord, type Message, OUTCOMES, cancelledStatus } from '../../message/message.js';
import { type PartialReport, addFailure, failureOf } from '../../ipc/partial-reply.js';
import { unackErr } from '../../spool/err-acks.js';
import { mapLimit } from '../../spool/map-limit.js';
import { writeCancelMarker } from '../../spool/message-files.js';
import type { HistoryEntry, QueueSpool } from '../../spool/queue-spool.js';
import { type Deadline, expiredStatus } from '../rules/expiry.js';
import type { Located } from './message-ops.js';
import type { MessageIndex } from '../index/message-index.js';
import type { RunMoves } from '../transitions/run-moves.js';
import type { Transitions } from '../transitions/transitions.js';

export interface LifecycleDeps {
  spool: QueueSpool;
  index: Pick<MessageIndex, 'liveState' | 'run' | 'isCoalesced' | 'queued'>;
  moves: Transitions;
  runMoves: Pick<RunMoves, 'unfoldOne'>;
  now: () => number;
  log: Logger;
}

export interface CancelRequest {
  reason?: string;
  /** Who asked (`cli:alice`, `web:10.0.0.5`), ≤ 64 characters; `socket` when absent. */
  actor?: string;
  /** Remove the message instead of keeping it in err. */
  purge?: boolean;
}

export function cancelRecord(req: CancelRequest, nowMs: number): CancelRecord {
  const by = req.actor ?? 'socket';
  return { at: new Date(nowMs).toISOString(), by, reason: req.reason ?? `by ${by}`, ...(req.purge ? { purge: true as const } : {}) };
}

export interface RequeueOptions {
  reset?: boolean;
  due?: number;
  actor?: string;
}

/** Messages read per step while looking for `requeue_errs` candidates, and how many reads or writes at once. */
const REQUEUE_CHUNK = 256;
const REQUEUE_LANES = 16;

/** What `requeue_errs` picks: err messages with this outcome (none means `failed`), oldest first, at most `limit`. */
export interface ErrSelection {
  outcome?: (typeof OUTCOMES)[number];
  limit?: number;
  actor?: string;
  /** Only these ids (a failure group, rq-beyond §B15.4). */
  only?: Set<string>;
}

export class LifecycleOps {
  constructor(private readonly d: LifecycleDeps) {}

  /**
   * Stops a message for good. prep and que (coalesced too) are finished to err at once; a running
   * one gets its durable `cancel` marker, then TERM (its run finishes it); a finished one is refused.
   */
  async cancel(id: string, where: Located, req: CancelRequest): Promise<'cancelled' | 'cancelling'> {
    const { index, spool, moves } = this.d;
    const record = cancelRecord(req, this.d.now());
    const finish = { status: cancelledStatus(record.reason), outcome: 'cancelled', fields: { cancel: record }, actor: record.by, purge: req.purge };
    // Memory again, synchronously: the message may have started since the caller located it.
    switch (index.liveState(id) ?? where.state) {
      case 'prep': {
        const known = moves.takePrep(id);
        const msg =
          known ??
          (await spool.readMessage('prep', id).catch(async (err) => {
            if (await spool.exists('prep', id)) moves.forgetPrep(id);
            throw err;
          }));
        await moves.toErr(id, 'prep', msg, finish, known);
        return 'cancelled';
      }
      case 'que': {
        const msg = index.isCoalesced(id) ? this.d.runMoves.unfoldOne(id) : moves.take(id);
        if (!msg) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
        await moves.toErr(id, 'que', msg, finish);
        return 'cancelled';
      }
      case 'run': {
        const run = index.run(id);
        if (!run?.script || !run.dir) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
        if (run.cancel) {
          // A second cancel answers once the first one's marker is durable.
          await run.cancelWritten;
          return 'cancelling';
        }
        if (run.released) {
          // The script has exited and its end is being decided (a retry, a resend, done): cancel
          // wherever that leaves the message, rather than answer for a run that is over.
          await run.ended;
          const now = await spool.locate(id);
          if (now === null) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
          return this.cancel(id, { state: now, dir: spool.msgDir(now, id) }, req);
        }
        // In memory first, synchronously: the run's end reads it after waiting for the marker's write.
        run.cancel = record;
        const marker = writeCancelMarker(run.dir, record, spool.dirSync);
        run.cancelWritten = marker;
        run.track(marker);
        try {
          await marker;
        } catch (err) {
          run.cancel = null;
          throw err;
        }
        spool.appendHistory(run.dir, { event: 'cancel_requested', actor: record.by, reason: record.reason });
        run.stop();
        return 'cancelling';
      }
      default:
        throw RqError.of('RQ_ERR_ALREADY_FINISHED', where.state);
    }
  }

  /**
   * err → que under the same id: `outcome` and `cancel` cleared (and `failures`/`interrupts` with
   * `reset`), due now or as asked; the msg write is durable before the rename (§B6).
   */
  async requeue(id: string, where: Located | null, opts: RequeueOptions): Promise<void> {
    const { spool } = this.d;
    if (where && where.state !== 'err') throw RqError.of('RQ_ERR_NOT_IN_ERR', where.state);
    const acked = !where;
    if (acked && !(await spool.exists('err', `.${id}`))) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
    const name = acked ? `.${id}` : id;
    const msg = await spool.readMessage('err', name);
    await this.writeRequeued(name, id, msg, opts);
    if (acked) await unackErr(spool, id);
    await (
      await this.moveRequeued(id, msg, acked, opts)
    )();
  }

  /**
   * Every unacknowledged err message that `sel` picks goes back to the que as `requeue` would send
   * it, oldest first; how many did, and which failed and why (a full disk). The msg writes run in
   * parallel lanes (their fsyncs overlap), the renames then go in id order (so arrival keeps the age
   * order) and share their directory fsyncs.
   */
  async requeueErrs(sel: ErrSelection): Promise<PartialReport> {
    const { spool } = this.d;
    const ids = (await spool.listFlat('err')).filter((id) => !sel.only || sel.only.has(id)).sort();
    const limit = sel.limit ?? Infinity;
    const picked: Message[] = [];
    for (let i = 0; i < ids.length && picked.length < limit; i += REQUEUE_CHUNK) {
      const msgs = await mapLimit(ids.slice(i, i + REQUEUE_CHUNK), REQUEUE_LANES, (id) => spool.readMessage('err', id).catch(() => null));
      for (const m of msgs) {
        if (m && picked.length < limit && (sel.outcome === undefined || (m.outcome ?? 'failed') === sel.outcome)) picked.push(m);
      }
    }
    const opts = { actor: sel.actor };
    const report: PartialReport = { total: picked.length, done: 0, failed: 0, failures: [] };
    // A message that could not be requeued is reported, never dropped from the count unsaid.
    const failed = (m: Message, err: unknown) => addFailure(report, { id: m.msg_id, ...failureOf(err, 'requeue message') });
    const written = await mapLimit(picked, REQUEUE_LANES, (m) =>
      this.writeRequeued(m.msg_id, m.msg_id, m, opts).then(
        () => m,
        (err) => void failed(m, err),
      ),
    );
    const syncs: (() => Promise<void>)[] = [];
    for (const m of written) {
      if (!m) continue;
      // Acknowledged, deleted or requeued by someone else meanwhile: not ours to move, nor to count.
      if (!(await spool.exists('err', m.msg_id))) {
        report.total -= 1;
        continue;
      }
      try {
        syncs.push(await this.moveRequeued(m.msg_id, m, false, opts));
      } catch (err) {
        failed(m, err);
      }
    }
    await Promise.all(syncs.map((sync) => sync()));
    report.done = syncs.length;
    return report;
  }

  /** Clears what ended the message (and its failure counts with `reset`), sets its due, and writes it durably in err/. */
  private async writeRequeued(name: string, id: string, msg: Message, opts: RequeueOptions): Promise<void> {
    msg.msg_id = id;
    delete msg.outcome;
    delete msg.cancel;
    // A passed expire_at would expire it again at once: a requeue means "run it".
    if (typeof msg.expire_at === 'number' && msg.expire_at * 1000 <= this.d.now()) delete msg.expire_at;
    if (opts.reset) {
      delete msg.failures;
      delete msg.last_failure;
      delete msg.interrupts;
    }
    msg.due = opts.due ?? Math.floor(this.d.now() / 1000);
    await this.d.spool.writeMessage('err', name, msg);
  }

  /** The rename err → que and the index after it; resolves to the move's directory sync. */
  private moveRequeued(id: string, msg: Message, acked: boolean, opts: RequeueOptions): Promise<() => Promise<void>> {
    return this.d.moves.requeue(id, msg, acked, { actor: opts.actor ?? 'requeue', details: opts.reset ? { reset: true } : undefined });
  }

  /** prep or que: the new priority is durable in `msg` before the que is re-keyed (rq-beyond §B7). */
  async setPriority(id: string, where: Located, priority: number, actor: string): Promise<number> {
    await this.rekey(id, where, { priority }, { event: 'priority', actor, priority });
    return priority;
  }

  /** prep or que: a new due (a max_age window moves with it), durable before the re-key (rq-beyond §B6). */
  async reschedule(id: string, where: Located, due: number, actor: string): Promise<number> {
    await this.rekey(id, where, { due }, { event: 'reschedule', actor, due });
    return due;
  }

  /** Writes `change` into a waiting message's `msg`, durably, then re-keys the que; refuses a message that is not waiting. */
  private async rekey(id: string, where: Located, change: Partial<Message>, line: Record<string, unknown>): Promise<void> {
    const { index, spool } = this.d;
    const state = index.liveState(id) ?? where.state;
    if ((state !== 'prep' && state !== 'que') || index.isCoalesced(id)) throw RqError.of('RQ_ERR_NOT_QUEUED', index.isCoalesced(id) ? 'coalesced' : state);
    const msg = (state === 'que' ? index.queued(id) : null) ?? (await spool.readMessage(state, id));
    const updated = { ...msg, ...change };
    await spool.writeMessage(state, id, updated);
    spool.appendHistory(spool.msgDir(state, id), line);
    // Memory follows the disk wherever the message is now: a commit may have moved it into the que
    // during the write, and a parked one is enqueued from memory once let go.
    this.d.moves.changed(id, change, updated);
  }

  /** A queued message past its deadline (taken out of the que by the dispatcher) ends in err `expired`. */
  async expire(msg: Message, deadline: Deadline | null): Promise<void> {
    const status = deadline ? expiredStatus(deadline) : 'EXPIRED';
    await this.d.moves
      .toErr(msg.msg_id, 'que', msg, { status, outcome: 'expired', actor: 'expiry' })
      .catch((err) => this.d.log.error({ err, msg_id: msg.msg_id }, 'could not expire message; it stays in que'));
  }

  /**
   * A message waiting off the que ends in err: rq-mgr refused its limit key for good (outcome
   * `failed`, rq-beyond §B12.3), or a dependency failed under policy `fail` (`dependency_failed`, §B8).
   */
  async finishWaiting(msg: Message, status: string, outcome: 'failed' | 'dependency_failed', actor: string): Promise<void> {
    await this.d.moves
      .toErr(msg.msg_id, 'que', msg, { status, outcome, actor })
      .catch((err) => this.d.log.error({ err, msg_id: msg.msg_id }, 'could not finish a waiting message to err; it stays in que'));
  }

  async history(id: string, where: Located): Promise<HistoryEntry[]> {
    return this.d.spool.readHistory(where.state, id);
  }
}
