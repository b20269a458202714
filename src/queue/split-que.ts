// The que as rq-beyond §B2 splits it: ready (due now, by priority, due, arrival) and delayed (due later, by due), so a future-dated urgent message never blocks a due one.
import type { Message } from '../message/message.js';
import { QueIndex, priorityOf } from './que-index.js';

export class SplitQue {
  private readonly ready = new QueIndex('priority');
  private readonly delayed = new QueIndex('due');
  /** One arrival counter for both heaps: a message keeps its place among equals when it becomes due. */
  private arrival = 0;

  constructor(private readonly now: () => number) {}

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
  }

  remove(id: string): Message | undefined {
    return this.ready.remove(id) ?? this.delayed.remove(id);
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
