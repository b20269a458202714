// The que as rq-beyond §B2 splits it: ready (due now, by priority, due, arrival) and delayed (due later, by due), so a future-dated urgent message never blocks a due one.
import type { Message } from '../../message/message.js';
import { QueIndex, priorityOf } from './que-index.js';

/** Epoch ms by which a queued message must start, or null (rq-beyond §B4). */
export type DeadlineOf = (msg: Message) => number | null;

export class SplitQue {
  private readonly ready = new QueIndex('priority');
  private readonly delayed = new QueIndex('due');
  /** Queued messages with an expiry deadline, ordered by it (`due` here is the deadline, epoch seconds). */
  private readonly deadlines = new QueIndex<{ msg_id: string; due: number }>('due');
  /** One arrival counter for both heaps: a message keeps its place among equals when it becomes due. */
  private arrival = 0;

  constructor(
    private readonly now: () => number,
    private readonly deadlineOf: DeadlineOf = () => null,
  ) {}

  get size(): number {
    return this.ready.size + this.delayed.size;
  }

  has(id: string): boolean {
    return this.ready.has(id) || this.delayed.has(id);
  }

  get(id: string): Message | undefined {
    return this.ready.get(id) ?? this.delayed.get(id);
  }

  /** Adds or re-keys a message (a new due or priority): it takes a new arrival, as a re-key always did. */
  insert(msg: Message): void {
    this.ready.remove(msg.msg_id);
    this.delayed.remove(msg.msg_id);
    (this.isDue(msg) ? this.ready : this.delayed).insert(msg, this.arrival++);
    this.keyDeadline(msg);
  }

  remove(id: string): Message | undefined {
    this.deadlines.remove(id);
    return this.ready.remove(id) ?? this.delayed.remove(id);
  }

  /** Takes out every message whose deadline has passed, earliest first. */
  takeExpired(): Message[] {
    const out: Message[] = [];
    for (let d = this.deadlines.peek(); d !== undefined && d.due * 1000 <= this.now(); d = this.deadlines.peek()) {
      const msg = this.remove(d.msg_id);
      if (msg) out.push(msg);
    }
    return out;
  }

  /** The earliest deadline (epoch ms), for the dispatcher's one timer. */
  nextDeadline(): number | undefined {
    const d = this.deadlines.peek();
    return d === undefined ? undefined : d.due * 1000;
  }

  /** Deadlines again for every queued message (the queue's default max_age changed). */
  rekeyDeadlines(): void {
    for (const m of [...this.values()]) this.keyDeadline(m);
  }

  private keyDeadline(msg: Message): void {
    const at = this.deadlineOf(msg);
    if (at === null) this.deadlines.remove(msg.msg_id);
    else this.deadlines.insert({ msg_id: msg.msg_id, due: at / 1000 });
  }

  /** The next message to run: the first ready one, else the earliest delayed one (for its due). */
  peek(): Message | undefined {
    this.promote();
    return this.ready.peek() ?? this.delayed.peek();
  }

  /** The first message in run order that `accept` takes: ready ones first, then delayed by due. */
  find(accept: (m: Message) => boolean): Message | undefined {
    this.promote();
    return this.ready.find(accept) ?? this.delayed.find(accept);
  }

  /**
   * Due and priority that put a message first (run now, rq-beyond §B6): the classic due of the
   * message currently first, less one, and the smallest ready priority.
   */
  front(): { due: number; priority: number } | undefined {
    const first = this.peek();
    return first === undefined ? undefined : { due: Number(first.due) || 0, priority: priorityOf(first) };
  }

  /** Up to `limit` messages in run order: ready, then delayed. */
  ordered(limit: number): Message[] {
    this.promote();
    const ready = this.ready.ordered(limit);
    return ready.length >= limit ? ready : [...ready, ...this.delayed.ordered(limit - ready.length)];
  }

  /** Up to `limit` messages not yet due, by due. */
  delayedOrdered(limit: number): Message[] {
    this.promote();
    return this.delayed.ordered(limit);
  }

  /** How many are ready and how many delayed, now. */
  sizes(): { ready: number; delayed: number } {
    this.promote();
    return { ready: this.ready.size, delayed: this.delayed.size };
  }

  /** The ready messages, in no particular order. */
  readyValues(): IterableIterator<Message> {
    this.promote();
    return this.ready.values();
  }

  *values(): IterableIterator<Message> {
    yield* this.ready.values();
    yield* this.delayed.values();
  }

  private isDue(msg: Message): boolean {
    return (Number(msg.due) || 0) * 1000 <= this.now();
  }

  /** Delayed messages whose due has come join the ready heap, keeping their arrival. */
  private promote(): void {
    for (let m = this.delayed.peek(); m !== undefined && this.isDue(m); m = this.delayed.peek()) {
      const seq = this.delayed.seqOf(m.msg_id)!;
      this.delayed.remove(m.msg_id);
      this.ready.insert(m, seq);
    }
  }
}
