// The dispatcher: which queued message starts next, when, and how many run at once.
import type { QueueConfig } from '../../config/queue-config.js';
import type { Message } from '../../message/message.js';
import type { LimitGate } from './limit-gate.js';
import type { MessageIndex } from '../index/message-index.js';
import { paramKey } from '../index/que-index.js';
import { timerDelay } from '../../backoff.js';

export interface DispatcherDeps {
  index: Pick<MessageIndex, 'nextDeadline' | 'nextQueued' | 'front' | 'readyCount'>;
  /** Takes messages out of the que (the transitions module). */
  moves: { take(id: string): Message | undefined; takeExpired(): Message[] };
  config: () => QueueConfig;
  /** UP: messages may start (PAUSE, DOWN and SCRIPTERROR hold them). */
  canStart: () => boolean;
  now: () => number;
  /** Starts one message, already taken out of the que; resolves when its run is over. */
  start: (msg: Message) => Promise<void>;
  /** Finishes a message whose expiry deadline passed, already taken out of the que (rq-beyond §B4). */
  expire: (msg: Message) => void;
  /** Concurrency limits shared across queues (rq-beyond §B12.3). */
  limits: Pick<LimitGate, 'keyOf' | 'park' | 'takeGranted' | 'withdrawAll'>;
  /** Makes a queued message's run files (job/, stdio.log, history) on the thread pool; best effort, its start makes what is missing. */
  stage: (msg: Message) => void;
}

/** Ids staged and not started yet; past this many (messages taken by a cancel or a move) the set starts again. */
const STAGED_MAX = 256;

export class Dispatcher {
  /** Runs holding a worker slot, and the blocking key each holds. */
  private readonly busy = new Map<string, string>();
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly staged = new Set<string>();

  constructor(private readonly d: DispatcherDeps) {}

  /** Expires what is past its deadline (in any admin state), then starts every runnable message the limits allow; arms one timer for the earliest future due or deadline. */
  pump(): void {
    if (this.stopped) return;
    for (const m of this.d.moves.takeExpired()) this.d.expire(m);
    const deadline = this.d.index.nextDeadline();
    if (deadline !== undefined) this.armWake(deadline);
    const config = this.d.config();
    // Out of UP, messages waiting for a slot give it back and wait in the que like the others.
    if (!this.d.canStart()) this.d.limits.withdrawAll();
    while (this.d.canStart() && this.busy.size < config.num_workers) {
      const granted = this.d.limits.takeGranted();
      if (granted) {
        this.startOne(granted, paramKey(granted, config.blocking_params));
        continue;
      }
      const next = this.pick(config.blocking_params);
      if (!next) break;
      const dueMs = Number(next.due) * 1000;
      if (dueMs > this.d.now()) {
        this.armWake(dueMs);
        break;
      }
      this.d.moves.take(next.msg_id);
      const key = this.d.limits.keyOf(next);
      // A limited message waits off the que for its slot; it holds no worker meanwhile.
      if (key !== null) this.d.limits.park(next, key);
      else this.startOne(next, paramKey(next, config.blocking_params));
    }
    this.stageNext();
  }

  /**
   * While runs hold every worker, the message that starts next gets its run files now: their inode
   * creations (the costliest file work of a start on a busy disk) run beside the scripts instead of
   * on the start's path.
   */
  private stageNext(): void {
    if (!this.d.canStart()) return;
    const next = this.d.index.nextQueued();
    if (!next || this.staged.has(next.msg_id) || Number(next.due) * 1000 > this.d.now()) return;
    if (this.staged.size >= STAGED_MAX) this.staged.clear();
    this.staged.add(next.msg_id);
    this.d.stage(next);
  }

  private startOne(msg: Message, blockingKey: string): void {
    this.staged.delete(msg.msg_id);
    this.busy.set(msg.msg_id, blockingKey);
    const p = this.d.start(msg);
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** The run of `id` gave its worker slot back (its script exited): the next message may start. */
  release(id: string): void {
    if (this.busy.delete(id)) this.pump();
  }

  private pick(keys: readonly number[]): Message | undefined {
    if (!keys.length || this.busy.size === 0) return this.d.index.nextQueued();
    const taken = new Set(this.busy.values());
    return this.d.index.nextQueued((m) => !taken.has(paramKey(m, keys)));
  }

  private armWake(dueMs: number): void {
    if (this.wakeTimer && this.wakeAt <= dueMs) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = dueMs;
    // setTimeout clamps to 2^31-1 ms; a later due simply re-arms when this fires.
    const delay = timerDelay(dueMs - this.d.now());
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, delay);
    this.wakeTimer.unref();
  }

  /** No more starts; resolves when every started run is over. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    await Promise.all(this.inFlight);
  }
}
