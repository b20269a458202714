// The queue's side of concurrency limits (rq-beyond §B12.3): park a limited message, ask rq-mgr for a slot, start it when granted, give the slot back when its run ends.
import type { Logger } from 'pino';
import type { QueueConfig } from '../../config/queue-config.js';
import { RqError, invalidField } from '../../errors.js';
import { refusalError } from '../../ipc/answer.js';
import type { AcquireAnswer, LimitRequest, MgrClient } from '../../ipc/mgr-client.js';
import { checkExpandedKey, expandLimit, limitPatternOf } from '../../message/limit-key.js';
import { idTime } from '../../message/message-id.js';
import type { CreateFields, Message } from '../../message/message.js';
import { Backoff } from './backoff.js';
import type { WaitMoves } from '../index/wait-moves.js';

/** Waiters a queue's reset carries at most; any beyond ask one by one after it. */
const RESET_BATCH = 10_000;

export interface LimitGateDeps {
  config: () => QueueConfig;
  mgr: MgrClient;
  /** Parks and lets go of a waiting message (the transitions module). */
  moves: WaitMoves;
  log: Logger;
  /** Something may start now (a grant). */
  pump: () => void;
  /** Is there an rq-mgr to ask (its socket exists)? A queue run without one holds no slots anywhere. */
  mgrPresent: () => boolean;
  /** A history line on a queued message. */
  note: (id: string, entry: Record<string, unknown>) => void;
  /** rq-mgr refused the message's key for good: it ends in err (LIMIT REFUSED - <text>). */
  refused: (msg: Message, text: string) => void;
}

interface Parked {
  msg: Message;
  key: string;
  /** Its template as a glob, for rq-mgr's report (limit_status, /metrics). */
  pattern: string | undefined;
  since: number;
  /** Place in line at the arbiter (1-based), 0 once granted, null before rq-mgr's first answer. */
  position: number | null;
  /** rq-mgr has answered for it (its acquire, or the reset that carried it). */
  asked: boolean;
  granted: boolean;
}

export class LimitGate {
  private readonly parked = new Map<string, Parked>();
  /** Granted ids in grant order: the dispatcher starts these before any ready message. */
  private granted: string[] = [];
  /** Running messages holding a slot, and its key. */
  private readonly holding = new Map<string, string>();
  /** Unanswered acquires and releases are sent again (§B8.2's rule: 1 s doubling to 60 s). */
  private readonly backoff = new Backoff();
  /** Releases on their way to rq-mgr, by message id. */
  private readonly releasing = new Map<string, Promise<void>>();
  private markReset!: () => void;
  /** limit_reset answered (or given up at close): no acquire goes out before it, or the reset would drop it. */
  private readonly resetDone = new Promise<void>((r) => (this.markReset = r));

  constructor(private readonly d: LimitGateDeps) {}

  private get queue(): string {
    return this.d.config().name;
  }

  private ref(id: string): string {
    return `${this.queue}/${id}`;
  }

  /** The key `msg` takes a slot of (its `limit`, else the queue's), expanded; null without one. */
  keyOf(msg: Pick<Message, 'limit'> & Record<string, unknown>): string | null {
    const template = this.templateOf(msg);
    return template === undefined ? null : expandLimit(template, msg, this.queue);
  }

  private templateOf(msg: Pick<Message, 'limit'>): string | undefined {
    return (typeof msg.limit === 'string' ? msg.limit : undefined) ?? this.d.config().limit;
  }

  /** At create: the expanded key is well formed and rq-mgr knows (or now learns) its concurrency; refused otherwise. */
  async checkCreate(fields: CreateFields): Promise<void> {
    const key = this.keyOf(fields as CreateFields & Record<string, unknown>);
    if (key === null && fields.limit_concurrency !== undefined)
      throw invalidField('limit_concurrency', 'a limit on the message or its queue to apply to', fields.limit_concurrency);
    if (key === null) return;
    checkExpandedKey(key, invalidField);
    const a = await this.d.mgr.limitDefine(key, fields.limit_concurrency).catch((err: Error) => {
      throw RqError.of('RQ_ERR_LIMITS_UNAVAILABLE', err.message);
    });
    // rq-mgr's refusal as it came: its code (a conflicting concurrency, a key with none) types it, never its text.
    if (!a.ok) throw refusalError(a);
  }

  /**
   * At start, after recovery killed what an earlier incarnation left and the first dispatch parked
   * what waits: the orphaned slots are freed and these waiters join the lines in one request, so
   * their place (by `since`) holds across a restart of this queue or of rq-mgr. Without an rq-mgr
   * there is no table to clean (a new one starts empty), so nothing is retried.
   */
  async reset(): Promise<void> {
    for (const wait of this.backoff.waits()) {
      if (!this.d.mgrPresent()) break;
      const batch = [...this.parked.values()].slice(0, RESET_BATCH);
      const acquires = batch.map((p) => this.request(p));
      const a = await this.d.mgr.limitReset(this.queue, acquires).catch(() => null);
      if (a?.ok) {
        if (a.value.freed) this.d.log.info({ freed: a.value.freed }, 'limit slots of the previous queue process freed');
        for (const p of batch) this.answered(p, a.value.results[this.ref(p.msg.msg_id)]);
        break;
      }
      await this.backoff.sleep(wait);
    }
    this.markReset();
  }

  private request(p: Parked): LimitRequest {
    return { key: p.key, holder: this.ref(p.msg.msg_id), since: p.since, concurrency: p.msg.limit_concurrency, pattern: p.pattern };
  }

  /** The dispatcher took `msg` out of the que and it has a key: it waits, off the que, for a slot. */
  park(msg: Message, key: string): void {
    const since = Math.max(Number(msg.due) * 1000 || 0, idTime(msg.msg_id) ?? 0);
    const template = this.templateOf(msg);
    const p: Parked = { msg, key, pattern: template === undefined ? undefined : limitPatternOf(template), since, position: null, granted: false, asked: false };
    this.parked.set(msg.msg_id, p);
    this.d.moves.park(msg, 'limit');
    void this.acquire(p);
  }

  private async acquire(p: Parked): Promise<void> {
    await this.resetDone;
    const id = p.msg.msg_id;
    // A release of the same message (a pause just before this resume) must reach rq-mgr first, or
    // it would take away the slot or the place this acquire is about to get.
    await this.releasing.get(id);
    for (const wait of this.backoff.waits()) {
      if (this.parked.get(id) !== p || p.asked) return;
      const a = await this.d.mgr.limitAcquire(this.request(p)).catch((err: Error) => ({ error: err.message }));
      if (this.parked.get(id) !== p) return this.release(p.key, id);
      if ('error' in a) {
        this.d.log.warn({ msg_id: id, key: p.key, err: a.error }, 'rq-mgr did not answer limit_acquire; asking again');
        await this.backoff.sleep(wait);
        continue;
      }
      return this.answered(p, a);
    }
  }

  /** What rq-mgr said to an acquire (alone, or in the reset): a slot now, a place in line, or no. */
  private answered(p: Parked, a: AcquireAnswer | undefined): void {
    const id = p.msg.msg_id;
    if (!a || this.parked.get(id) !== p) return;
    p.asked = true;
    if ('refused' in a) {
      this.d.moves.unpark(id);
      this.parked.delete(id);
      return this.d.refused(p.msg, a.refused);
    }
    if (a.granted) return this.grant(id, p);
    p.position = a.position;
    this.d.note(id, { event: 'limit_wait', key: p.key, position: a.position });
  }

  /** limit_granted from rq-mgr: true when the message still waits for that key. */
  onGranted(id: string, key: string): boolean {
    const p = this.parked.get(id);
    if (!p || p.key !== key || p.granted) return false;
    this.grant(id, p);
    return true;
  }

  private grant(id: string, p: Parked): void {
    p.granted = true;
    p.position = 0;
    this.granted.push(id);
    this.d.note(id, { event: 'limit_grant', key: p.key });
    this.d.pump();
  }

  /** The next granted message, out of the parked ones; its slot is held until its run ends. */
  takeGranted(): Message | undefined {
    const id = this.granted.shift();
    if (id === undefined) return undefined;
    const p = this.parked.get(id)!;
    this.parked.delete(id);
    this.d.moves.unpark(id);
    this.holding.set(id, p.key);
    return p.msg;
  }

  /** A run is over (its script is gone): its slot goes back. */
  ended(id: string): void {
    const key = this.holding.get(id);
    if (key === undefined) return;
    this.holding.delete(id);
    void this.release(key, id);
  }

  /** A parked message was cancelled, deleted or expired: its place in line or its slot goes back. */
  withdraw(id: string): void {
    const p = this.parked.get(id);
    if (!p) return;
    this.parked.delete(id);
    this.granted = this.granted.filter((g) => g !== id);
    void this.release(p.key, id);
  }

  /** The queue left UP (PAUSE, DOWN, stopping): parked messages go back to the que and give their slots back; they ask again on resume. */
  withdrawAll(): void {
    for (const [id, p] of [...this.parked]) {
      this.parked.delete(id);
      this.d.moves.release(p.msg);
      void this.release(p.key, id);
    }
    this.granted = [];
  }

  /** The key whose slot a running message holds. */
  heldKey(id: string): string | undefined {
    return this.holding.get(id);
  }

  /** Refs rq-mgr's sweep may keep: running and granted messages. */
  held(): string[] {
    return [...this.holding.keys(), ...this.granted];
  }

  /** get_message's `waiting` of a parked message. */
  waitingOf(id: string): { reason: 'limit'; key: string; position: number | null } | undefined {
    const p = this.parked.get(id);
    return p ? { reason: 'limit', key: p.key, position: p.position } : undefined;
  }

  /** Parked messages, in the order they asked. */
  waitingList(): { msg_id: string; reason: 'limit'; key: string; position: number | null }[] {
    return [...this.parked.values()].map((p) => ({ msg_id: p.msg.msg_id, reason: 'limit' as const, key: p.key, position: p.position }));
  }

  /** Sent until answered, after any earlier release of the same message; an acquire of it waits for it. */
  private release(key: string, id: string): Promise<void> {
    const sent = (async () => {
      await this.releasing.get(id);
      for (const wait of this.backoff.waits()) {
        const a = await this.d.mgr.limitRelease(key, this.ref(id)).catch(() => null);
        if (a?.ok) return;
        await this.backoff.sleep(wait);
      }
    })();
    this.releasing.set(id, sent);
    void sent.finally(() => {
      if (this.releasing.get(id) === sent) this.releasing.delete(id);
    });
    return sent;
  }

  close(): void {
    this.backoff.close();
    this.markReset();
  }
}
