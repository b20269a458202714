// What the socket commands and cron do to messages: create, commit, look up, view, delete, run now, clone, ack.
import type { CreateFields, Message, MessageWaiting } from '../../message/message.js';
import { CLONE_FIELDS } from '../../message/create-fields.js';
import { pickFields, statusText } from '../../message/message.js';
import type { State } from '../../message/states.js';
import { RqError } from '../../errors.js';
import { type PartialReport, addFailure, failureOf } from '../../ipc/partial-reply.js';
import { attachmentNames } from '../../spool/attachments.js';
import { readDependents, readResolved } from '../../spool/dependency-files.js';
import { ackErr, ackErrs } from '../../spool/err-acks.js';
import { createCopy } from '../../spool/message-copy.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { DiskFull } from '../status/disk-full.js';
import type { IdempotencyKeys } from '../coordination/idempotency.js';
import type { MessageIndex } from '../index/message-index.js';
import { priorityOf } from '../index/que-index.js';
import type { QueueEvents } from '../status/queue-events.js';
import type { Transitions } from '../transitions/transitions.js';

export type Located = { state: State; dir: string };

export interface MessageOpsDeps {
  spool: QueueSpool;
  index: Pick<MessageIndex, 'liveState' | 'run' | 'isCoalesced' | 'isQueued' | 'queued' | 'front' | 'liveMessage'>;
  moves: Transitions;
  events: QueueEvents;
  now: () => number;
  /** Something became runnable. */
  pump: () => void;
  keys: IdempotencyKeys;
  /** Why a parked message waits on dependencies (rq-beyond §B8) or for a limit slot (§B12.3), if it does. */
  parkedWait: (id: string) => MessageWaiting | undefined;
  /** Sends a waiting message's dependency registrations; resolves once each has answered once. */
  register: (id: string) => Promise<void>;
  /** A message queued now would start within a few dispatches (the queue is UP, little is ready ahead of it). */
  startsSoon: () => boolean;
  /** Journals a new message's tags in the tag index; awaited before its msg is written. */
  tagged: (id: string, tags: readonly string[]) => Promise<void>;
  /** A create refused for want of space makes the queue DISK FULL until a page can be written again. */
  disk: DiskFull;
  /** Why no queued message starts now (a script that cannot run, a full disk), or null: a queued message's status says it. */
  held: () => string | null;
}

export class MessageOps {
  constructor(private readonly d: MessageOpsDeps) {}

  /** Where a message is: memory first (prep, que, run), then the disk (done, relayed, err). */
  async locate(id: string): Promise<Located | null> {
    const { index, spool } = this.d;
    const live = index.liveState(id);
    if (live === 'run') return { state: 'run', dir: index.run(id)!.dir ?? spool.msgDir('que', id) };
    if (live) return { state: live, dir: spool.msgDir(live, id) };
    for (const s of ['done', 'relayed', 'err'] as const) {
      if (await spool.exists(s, id)) return { state: s, dir: spool.msgDir(s, id) };
    }
    return null;
  }

  /** locate, and an acknowledged err message (err/.<id>) too: it still exists for dependencies and tags. */
  async locateAny(id: string): Promise<Located | null> {
    const where = await this.locate(id);
    if (where) return where;
    return (await this.d.spool.exists('err', `.${id}`)) ? { state: 'err', dir: this.d.spool.msgDir('err', `.${id}`) } : null;
  }

  /** The message with its derived fields (spec §2.3), read fresh. */
  async view(id: string, where: Located): Promise<Message> {
    const { index, spool } = this.d;
    const mem = index.liveMessage(id);
    const msg: Message = mem ? { ...mem } : await spool.readMessage(where.state, id);
    msg.path = spool.relPath(where.dir);
    msg.status = this.waitingText(id, where) ?? statusText(where.state, await this.jobStatus(id, where));
    msg.state = where.state;
    delete msg.waiting;
    if (where.state === 'que') msg.waiting = this.waitingOf(id, msg);
    delete msg._attachments;
    await this.dependencyViews(msg, where, mem);
    const attachments = await spool.attachments(where.state, id);
    if (Object.keys(attachments).length) msg._attachments = attachments;
    return msg;
  }

  /** get_message's derived `depends_done` (from the `resolved` file) and `dependents` (rq-beyond §B1.2). */
  private async dependencyViews(msg: Message, where: Located, mem: Message | undefined): Promise<void> {
    delete msg.dependents;
    if (Array.isArray(msg.depends) && !mem?.depends_done) {
      msg.depends_done = Object.fromEntries((await readResolved(where.dir)).map((l) => [l.ref, l.outcome ? `${l.state}:${l.outcome}` : l.state]));
    }
    const dependents = await readDependents(where.dir);
    if (dependents.length) msg.dependents = dependents;
  }

  /** The running script's last status line, or the status file's; null when there is neither. */
  async jobStatus(id: string, where: Located): Promise<{ job_status: string | null } | null> {
    const run = where.state === 'run' ? this.d.index.run(id) : undefined;
    if (run?.script) return { job_status: run.jobStatus };
    return this.d.spool.readStatusAt(where.dir);
  }

  /** Why a que message is not running yet (rq-beyond §B1.2, derived, never stored). */
  private waitingOf(id: string, msg: Message): MessageWaiting {
    if (this.d.index.isCoalesced(id)) return { reason: 'coalesced', into: String(msg.dup) };
    const parked = this.d.parkedWait(id);
    if (parked) return parked;
    const due = Number(msg.due) || 0;
    return due * 1000 > this.d.now() ? { reason: 'delayed', due } : { reason: 'ready' };
  }

  /** `{path, status: "<state> - <text>", state}` as get_message_status answers it. */
  async statusView(id: string, where: Located): Promise<{ path: string; status: string; state: State }> {
    const job = await this.jobStatus(id, where);
    const parked = this.waitingText(id, where);
    const status = parked ?? (job ? `${where.state} - ${job.job_status ?? ''}` : where.state);
    const held = where.state === 'que' && parked === undefined ? this.d.held() : null;
    return { path: this.d.spool.relPath(where.dir), status: held ? `${status} - waiting: ${held}` : status, state: where.state };
  }

  /** The derived status of a message waiting on dependencies or a slot (rq-beyond §B1.3), instead of its status file's. */
  private waitingText(id: string, where: Located): string | undefined {
    const w = where.state === 'que' ? this.d.parkedWait(id) : undefined;
    if (w?.reason === 'dependencies') return `que - WAITING FOR ${w.waiting_on.length} ${w.waiting_on.length === 1 ? 'DEPENDENCY' : 'DEPENDENCIES'}`;
    if (w?.reason === 'limit') {
      if (w.position === 0) return `que - SLOT GRANTED ${w.key}`;
      return `que - WAITING FOR SLOT ${w.key} (${w.position === null ? 'asking rq-mgr' : `${w.position - 1} ahead`})`;
    }
    return undefined;
  }

  /** Says DISK FULL (once: later refusals find it said) when `err` is for want of space; returns `err`. */
  private noRoom(err: unknown): unknown {
    return this.d.disk.noted('create', err);
  }

  /** Text of a running message's status for `messages run`. */
  runStatus(id: string): string {
    const run = this.d.index.run(id);
    return run ? statusText('run', run.script ? { job_status: run.jobStatus } : null) : 'run';
  }

  /**
   * Creates a message. A committed one becomes runnable the moment its directory is renamed into
   * que/ (the dispatcher may start it while the fsyncs run), but the caller's `ok` still waits for them.
   */
  async create(fields: CreateFields, commit: boolean, alongside?: (id: string) => Promise<void>): Promise<Message> {
    const { index, spool } = this.d;
    const tags = fields.tags;
    // Only a tagged create waits for a journal line before its msg is written (rq-beyond §B9.5).
    let c;
    try {
      c = tags?.length ? await spool.createAfter(fields, { commit }, (id) => this.d.tagged(id, tags)) : spool.createNow(fields, { commit });
    } catch (err) {
      throw this.noRoom(err);
    }
    this.d.moves.created(c.msg, commit ? 'que' : 'prep');
    try {
      await Promise.all([c.durable, alongside?.(c.msg.msg_id)]);
    } catch (err) {
      // Observers heard of it when it became visible: they hear it is gone too.
      this.d.moves.uncreated(c.msg.msg_id, commit ? 'que' : 'prep');
      throw this.noRoom(err);
    }
    // `ok` means tracked (rq-beyond §B8.2): the dependencies' queues have heard of it.
    if (commit && c.msg.depends) await this.d.register(c.msg.msg_id);
    // Its run files made now spare the start that work; a message with many ahead (a bulk, a paused
    // queue) would pay four inodes per create for nothing soon, and its start makes them anyway.
    if (!commit || (index.isQueued(c.msg.msg_id) && this.d.startsSoon())) void spool.stageRun(c.dir);
    // Started during the create's fsyncs: the que → run rename is not fsynced on its own (recovery
    // re-queues from run/ anyway), so without a journal the `ok` also waits for run/ to hold it
    // durably. A journal record covers it wherever the crash leaves it (replayJournal).
    else if (index.run(c.msg.msg_id) && !spool.journaled) await spool.dirSync.sync(spool.paths.state.run);
    return c.msg;
  }

  /**
   * A create that carries an idempotency key answers the message made with that key within the
   * window (`created` false) and makes nothing; the key's record is made durable with the message.
   */
  async createOnce(fields: CreateFields, commit: boolean): Promise<{ id: string; created: boolean }> {
    const key = fields.idempotency_key;
    if (key === undefined) return { id: (await this.create(fields, commit)).msg_id, created: true };
    return this.d.keys.once(key, async (record) => (await this.create(fields, commit, record)).msg_id);
  }

  /** prep → que; false when `id` is not in prep. */
  async commit(id: string): Promise<boolean> {
    const moved = await this.d.moves.commit(id);
    if (!moved) return false;
    await moved.sync();
    if (moved.waits) await this.d.register(id);
    return true;
  }

  /** Deletes a message in prep, que, err (acked too), done or relayed. */
  async remove(id: string, where: Located): Promise<void> {
    if (where.state === 'que' && this.d.index.isCoalesced(id)) throw RqError.of('RQ_ERR_COALESCED');
    await this.d.moves.remove(id, where.state);
  }

  /**
   * Brings a queued message to the front: due := min(now, first due − 1) (classic), and under
   * priorities priority := the first one's when that is lower (rq-beyond §B6).
   */
  async runNow(id: string): Promise<void> {
    const { index } = this.d;
    const msg = index.queued(id)!;
    const front = index.front();
    const change: Partial<Message> = { due: Math.min(Math.floor(this.d.now() / 1000), (front?.due ?? Infinity) - 1) };
    if (front && front.priority < priorityOf(msg)) change.priority = front.priority;
    // On disk before the que may start it: once renamed into run/, a write to que/ fails, and a
    // crash would bring it back with its old due (an hour away, say) instead of now.
    await this.d.spool.writeMessage('que', id, { ...msg, ...change });
    this.d.moves.changed(id, change);
  }

  async clone(id: string, where: Located): Promise<Message> {
    const old = await this.d.spool.readMessage(where.state, id);
    // The old due is kept, so the clone is due at once (spec §3.7).
    const fields = { ...pickFields(old, CLONE_FIELDS), count: 0 };
    const names = await attachmentNames(where.dir);
    const tags = fields.tags as string[] | undefined;
    const journal = tags?.length ? (newId: string) => this.d.tagged(newId, tags) : undefined;
    const msg = await createCopy(this.d.spool, fields, names.length ? where.dir : null, { cloned_from: id }, journal);
    this.d.moves.created(msg, 'que');
    if (msg.depends) await this.d.register(msg.msg_id);
    return msg;
  }

  /** One err message acknowledged, as ack_errs does them all; refused when it is not an unacknowledged err message. */
  async ackErr(id: string, where: Located): Promise<void> {
    if (where.state !== 'err' || id.startsWith('.')) throw RqError.of('RQ_ERR_NOT_IN_ERR', where.state === 'err' ? 'acknowledged' : where.state);
    if (!(await ackErr(this.d.spool, id))) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
    this.d.moves.acked(1);
    this.d.events.emit('acked', { ids: [id] });
  }

  /** Every err message acknowledged: how many were, and which failed and why. */
  async ackErrs(): Promise<PartialReport> {
    const { ids, failed } = await ackErrs(this.d.spool);
    this.d.moves.acked(ids.length);
    this.d.events.emit('acked', { ids });
    const report: PartialReport = { total: ids.length + failed.length, done: ids.length, failed: 0, failures: [] };
    for (const f of failed) addFailure(report, { id: f.id, ...failureOf(f.err, 'acknowledge message') });
    return report;
  }
}
