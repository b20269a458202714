// One queue process's core: composes the spool, the message index, the dispatcher, runs, admin state and observers.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { QueueConfig } from '../config/queue-config.js';
import { QueueSpool } from '../spool/queue-spool.js';
import { AdminState, type QueueStatus } from './status/admin-state.js';
import { roomProbe, spaceWaitingSpool } from './status/disk-full.js';
import { Coalescer } from './coordination/coalescing.js';
import { RunMoves } from './transitions/run-moves.js';
import { Transitions } from './transitions/transitions.js';
import { Dispatcher } from './coordination/dispatcher.js';
import { deadlineOf } from './rules/expiry.js';
import type { Peer } from './lifecycle/dup.js';
import type { StateCounts } from '../message/states.js';
import type { Message } from '../message/message.js';
import { IdempotencyKeys } from './coordination/idempotency.js';
import { MessageIndex } from './index/message-index.js';
import { LifecycleOps } from './lifecycle/lifecycle-ops.js';
import { BulkRunner } from './lifecycle/bulk-ops.js';
import { MessageOps } from './lifecycle/message-ops.js';
import { QueueEvents } from './status/queue-events.js';
import { Runs } from './lifecycle/runs.js';
import { finishedCounts, recoverQueue } from './lifecycle/start-recovery.js';
import { resolveScript } from './launch/script-runner.js';
import { TagOps } from './tags/tag-ops.js';
import { LimitGate } from './coordination/limit-gate.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import type { DependencyOutbox } from './dependencies/dependency-outbox.js';
import type { DependencyWaits } from './dependencies/dependency-waits.js';
import { wireDependencies } from './dependencies/dependency-wiring.js';
import { observeWebhooks } from './observers/webhooks.js';
import { QueueStats } from './observers/queue-stats.js';
import { TraceSpans } from './observers/trace-spans.js';
import { DEFAULT_IDEMPOTENCY_WINDOW_MS, type QueueDeps } from './queue-deps.js';
export type { Peer } from './lifecycle/dup.js';
export { DEFAULT_IDEMPOTENCY_WINDOW_MS, type QueueDeps } from './queue-deps.js';
export type { Located } from './lifecycle/message-ops.js';

/** How long a limit request waits for rq-mgr before it is asked again. */
const MGR_TIMEOUT_MS = 5000;
/** Blank message directories kept ready: a burst of concurrent creates makes no inode on its path. */
const BLANKS = 16;

export class Queue {
  readonly events = new QueueEvents();
  readonly spool: QueueSpool;
  readonly index: MessageIndex;
  /** Every change of a waiting message's state (runs have theirs, transitions/run-moves.ts). */
  readonly moves: Transitions;
  readonly ops: MessageOps;
  readonly lifecycle: LifecycleOps;
  readonly tags: TagOps;
  /** Bulk actions under way and recently finished; `peer` reaches other queues (a bulk move). */
  readonly bulk: BulkRunner;
  readonly peer: Peer;
  readonly limits: LimitGate;
  readonly waits: DependencyWaits;
  readonly outbox: DependencyOutbox;
  readonly stats: QueueStats;
  readonly admin: AdminState;
  /** The spans of traced messages, when the root exports them. */
  private readonly spans: TraceSpans | null;
  private readonly dispatcher: Dispatcher;
  private readonly runs: Runs;
  private readonly webhooksSent: () => Promise<void>;
  private readonly keys: IdempotencyKeys;
  /** A message queued now would start within a few dispatches: worth making its run files (and blanks') ahead. */
  private readonly startsSoon = (): boolean => this.admin.status === 'UP' && this.index.readyCount() <= 2 * this.configNow.num_workers;
  private configNow: QueueConfig;
  /** The queue's clock (tests drive it). */
  readonly now: () => number;
  private readonly startedAt: number;
  private stopping = false;
  /** Ids the recovery scan brought back from run/, until they start again. */
  private readonly resumed = new Set<string>();
  readonly log: Logger;
  readonly inFleet: boolean;
  private markReady!: () => void;
  /** Resolves when the recovery scan has loaded the queue; commands other than ping/status wait for it. */
  readonly ready = new Promise<void>((r) => (this.markReady = r));

  constructor(deps: QueueDeps) {
    this.configNow = deps.config;
    this.inFleet = deps.fleetUrl !== undefined;
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    // A message a crash or stop cut short has started already: expiry is for messages never started.
    this.index = new MessageIndex(
      this.now,
      (m) => (this.resumed.has(m.msg_id) ? null : (deadlineOf(m, this.configNow)?.at ?? null)),
      queuePaths(deps.root, deps.config.name).state,
    );
    this.events.on('started', ({ msg }) => this.resumed.delete(msg.msg_id));
    this.log = deps.log;
    const config = () => this.configNow;
    const index = this.index;
    const events = this.events;
    this.spool = new QueueSpool(deps.root, deps.config.name, {
      host: deps.host,
      now: this.now,
      blanks: BLANKS,
      stageBlanks: this.startsSoon,
      fs: deps.fs,
      onMoved: (m) => events.emit('moved', m),
      onHistoryError: (err) => this.log.warn({ err: err.message }, 'history line not written; the message moved all the same'),
      beforeFinish: (id, from, to) => this.outbox.beforeFinish(id, from, to),
      onJournalError: (err) => this.log.warn({ err: err.message }, 'create journal checkpoint failed; the next one tries again'),
    });
    const spool = this.spool;
    // Observers hear of the new status before the moves a resume starts.
    const statusChanged = () => {
      events.emit('status', { status: this.admin.status });
      this.pump();
    };
    this.admin = new AdminState(spool.paths, statusChanged, {
      resolve: () => resolveScript(deps.root, this.configNow.script, deps.scriptOutside),
      target: () => path.resolve(deps.root, this.configNow.script),
      log: this.log,
      roomProbe: roomProbe(spool),
    });
    const pump = () => this.pump();
    const moves = new Transitions({ spool, index, events, now: this.now, admit: (msg) => this.waits.admit(msg), pump });
    this.moves = moves;
    const ends = spaceWaitingSpool(spool, this.admin.disk);
    const runMoves = new RunMoves({ spool, ends, index, coalescer: new Coalescer({ index, config }), now: this.now });
    this.runs = new Runs({
      host: deps.host,
      config,
      spool,
      index,
      moves: runMoves,
      ends,
      admin: this.admin,
      events,
      dup: { root: deps.root, queue: () => this.name, spool, peer: deps.peer, now: this.now, queued: (msg) => moves.created(msg, 'que') },
      launch: deps.launch,
      baseEnv: deps.baseEnv,
      log: this.log,
      now: this.now,
      released: (id) => {
        this.limits.ended(id);
        this.dispatcher.release(id);
      },
      pump: () => this.pump(),
      stopping: () => this.stopping,
      killGraceMs: deps.killGraceMs,
      runTrace: (msg, startMs) => this.spans?.runContext(msg, startMs) ?? msg,
    });
    this.limits = new LimitGate({
      config,
      mgr: new MgrClient(rootPaths(deps.root).mgrSock, MGR_TIMEOUT_MS),
      mgrPresent: () => fs.existsSync(rootPaths(deps.root).mgrSock),
      moves,
      log: this.log,
      pump: () => this.pump(),
      note: (id, entry) => spool.appendHistory(spool.msgDir('que', id), entry),
      refused: (msg, text) => void this.lifecycle.finishWaiting(msg, `LIMIT REFUSED - ${text}`, 'failed', 'limits'),
    });
    this.dispatcher = new Dispatcher({
      index,
      moves,
      config,
      canStart: () => this.admin.status === 'UP' && this.runs.guard.canStart(),
      now: this.now,
      start: (msg) => this.runs.run(msg),
      expire: (msg) => void this.lifecycle.expire(msg, deadlineOf(msg, this.configNow)),
      limits: this.limits,
      stage: (msg) => void spool.stageRun(spool.msgDir('que', msg.msg_id)),
    });
    this.keys = new IdempotencyKeys({
      file: spool.paths.keysFile,
      windowMs: () => deps.idempotencyWindowMs ?? DEFAULT_IDEMPOTENCY_WINDOW_MS,
      now: this.now,
      // The disk too: a commit holds a prep message in neither index nor que/ while it reads it.
      exists: async (id) => (await this.ops.locate(id)) !== null || (await spool.exists('prep', id)) || (await spool.exists('que', id)),
      dirSync: spool.dirSync,
      log: this.log,
    });
    this.ops = new MessageOps({
      spool,
      index,
      moves,
      events,
      now: this.now,
      pump,
      keys: this.keys,
      startsSoon: this.startsSoon,
      tagged: (id, tags) => this.tags.journalNew(id, tags),
      parkedWait: (id) => this.waits.waitingOf(id) ?? this.limits.waitingOf(id),
      register: (id) => this.waits.register(id),
      disk: this.admin.disk,
      held: () => this.admin.heldBecause(),
    });
    this.lifecycle = new LifecycleOps({ spool, index, moves, runMoves, now: this.now, log: this.log });
    ({ waits: this.waits, outbox: this.outbox } = wireDependencies({ ...deps, spool, events, moves, ops: this.ops, lifecycle: this.lifecycle, pump }));
    this.index.onUnparked = (id, owner) => (owner === 'limit' ? this.limits.withdraw(id) : this.waits.forget(id));
    this.tags = new TagOps({ spool, index, moves, ops: this.ops, lifecycle: this.lifecycle, events, now: this.now, log: this.log });
    this.bulk = new BulkRunner({ events, now: this.now });
    this.peer = deps.peer;
    const retention = deps.statsRetention ?? { days: 30, histogramDays: 7 };
    this.stats = new QueueStats({ name: deps.config.name, events, spool, index, now: this.now, log: this.log, retention });
    const enteredAt = (msg: Message) => this.stats.collector.enteredAt(msg);
    const spanDeps = { events, queue: () => this.name, fullId: (id: string) => spool.fullId(id), enteredAt, now: this.now };
    this.spans = deps.tracing ? new TraceSpans({ ...spanDeps, tracing: deps.tracing }) : null;
    this.webhooksSent = observeWebhooks(events, { peer: deps.peer, fullId: (id) => spool.fullId(id), log: this.log });
  }

  get name(): string {
    return this.configNow.name;
  }

  get config(): QueueConfig {
    return this.configNow;
  }

  uptime(): number {
    return Math.floor((this.now() - this.startedAt) / 1000);
  }

  fullId(id: string): string {
    return this.spool.fullId(id);
  }

  counts(): StateCounts {
    return this.index.counts();
  }

  /** UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL, with the admin files re-read and a fixed script noticed. */
  status(): QueueStatus {
    this.admin.refresh();
    this.admin.recheckScript();
    return this.admin.status;
  }

  isDown(): boolean {
    return this.admin.isDown();
  }

  /** Recovery scan, counts, watches; then the first dispatch. */
  async start(): Promise<void> {
    await this.stats.load();
    const rec = await recoverQueue(this.spool, this.events, this.log, this.configNow.max_interrupts);
    for (const id of rec.requeued) this.resumed.add(id);
    await this.moves.load(rec, await finishedCounts(this.spool), async (m) => Array.isArray(m.depends) && (await this.waits.recover(m)));
    await this.keys.load();
    await this.tags.load(rec.que);
    this.admin.watch();
    this.markReady();

    for (const w of this.waits.waitingList()) void this.waits.register(w.msg_id);
    void this.outbox.replay().catch((err: Error) => this.log.warn({ err: err.message }, 'outbox not replayed'));
    this.pump();
    // Recovery has killed what the previous process left, and the pump parked what waits for a
    // slot: one reset frees the old slots and enters these waiters (their acquires wait for it).
    void this.limits.reset();
  }

  reconfigure(config: QueueConfig): void {
    this.configNow = config;
    this.moves.reconfigured();
    this.log.info({ config }, 'config reloaded');
    this.pump();
  }

  pump(): void {
    this.dispatcher.pump();
  }

  destroy(id: string): boolean {
    return this.runs.destroy(id);
  }

  /**
   * Stops: no new starts, running scripts' groups get TERM then KILL after the grace. Their
   * messages stay in run/; the next start returns them to que (at-least-once).
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    // The dispatcher stops first, so a run ended by the signals below starts no other.
    const dispatched = this.dispatcher.stop();
    this.admin.close();
    this.runs.stop();
    this.limits.withdrawAll();
    await dispatched;
    await this.webhooksSent();
    // The runs have ended (interrupted ones too): their spans go out before the process does.
    await this.spans?.close();
    await this.keys.close();
    await this.tags.close();
    this.limits.close();
    this.waits.close();
    this.outbox.close();
    await this.stats.flush();
    await this.spool.close();
  }
}
