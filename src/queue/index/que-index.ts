// One heap of the in-memory que: messages ordered by (due, arrival), or by (priority, due, arrival), with O(log n) insert, pick and removal.
import type { Message } from '../../message/message.js';
import { paramFingerprint } from '../../spool/message-bodies.js';

/** The values of a message's blocking or coalescing params, as one comparable key (a light message's are not read back). */
export function paramKey(m: Message, keys: readonly number[]): string {
  return JSON.stringify(keys.map((k) => paramFingerprint(m, `param${k}`)));
}

/** A message's place in the heap; the map holds the live one, so a deep que pays one object per message for it. */
interface Entry<T = unknown> {
  id: string;
  pri: number;
  due: number;
  seq: number;
  msg: T;
}

function byDue(a: Entry, b: Entry): boolean {
  return a.due < b.due || (a.due === b.due && a.seq < b.seq);
}

/** rq-beyond §B7: lower priority runs first; then due, then arrival. */
function byPriority(a: Entry, b: Entry): boolean {
  return a.pri < b.pri || (a.pri === b.pri && byDue(a, b));
}

/** What a heap orders: a message, or any entry keyed the same way (the expiry deadlines). */
export interface Queued {
  msg_id: string;
  due?: unknown;
  priority?: unknown;
}

/** A message's priority as the heap orders it (0 when absent or not a number). */
export function priorityOf(msg: Queued): number {
  return typeof msg.priority === 'number' ? msg.priority : 0;
}

/**
 * A binary heap with lazy deletion: removing or re-keying a message only drops it from the map;
 * its stale heap entry is discarded when it surfaces. Ties on `due` run in arrival order.
 */
export class QueIndex<T extends Queued = Message> {
  private heap: Entry<T>[] = [];
  private readonly live = new Map<string, Entry<T>>();
  private seq = 0;
  private readonly before: (a: Entry, b: Entry) => boolean;

  constructor(order: 'due' | 'priority' = 'due') {
    this.before = order === 'priority' ? byPriority : byDue;
  }

  get size(): number {
    return this.live.size;
  }

  /** Heap entries, live and stale: what re-keys cost in memory, kept under max(64, 2 × size). */
  get entries(): number {
    return this.heap.length;
  }

  has(id: string): boolean {
    return this.live.has(id);
  }

  get(id: string): T | undefined {
    return this.live.get(id)?.msg;
  }

  values(): IterableIterator<T> {
    return [...this.live.values()].map((v) => v.msg)[Symbol.iterator]();
  }

  /** `seq` keeps a message's arrival when it moves between heaps; a new one is taken otherwise. */
  insert(msg: T, seq = this.seq++): void {
    const entry: Entry<T> = { id: msg.msg_id, pri: priorityOf(msg), due: Number(msg.due) || 0, seq, msg };
    this.live.set(msg.msg_id, entry);
    this.push(entry);
    // Stale entries can outnumber live ones after many re-keys; rebuild keeps memory bounded.
    if (this.heap.length > 64 && this.heap.length > 2 * this.live.size) this.rebuild();
  }

  remove(id: string): T | undefined {
    const v = this.live.get(id);
    if (!v) return undefined;
    this.live.delete(id);
    return v.msg;
  }

  /** The arrival number of a queued message. */
  seqOf(id: string): number | undefined {
    return this.live.get(id)?.seq;
  }

  /** The first message in the heap's order, or undefined. */
  peek(): T | undefined {
    this.dropStale();
    const top = this.heap[0];
    return top ? this.live.get(top.id)!.msg : undefined;
  }

  /**
   * The first message in order that `accept` takes, without removing it. Entries that are
   * refused are looked at in heap order, so the cost is O(k log n) for k refused ones.
   */
  find(accept: (m: T) => boolean): T | undefined {
    const refused: Entry<T>[] = [];
    let found: T | undefined;
    while (this.heap.length) {
      this.dropStale();
      const top = this.heap[0];
      if (!top) break;
      const msg = this.live.get(top.id)!.msg;
      if (accept(msg)) {
        found = msg;
        break;
      }
      refused.push(this.pop()!);
    }
    for (const e of refused) this.push(e);
    return found;
  }

  /** Smallest due in the que (for run-now), or undefined when empty. */
  minDue(): number | undefined {
    const m = this.peek();
    return m === undefined ? undefined : Number(m.due) || 0;
  }

  /** Up to `limit` messages in run order (for listings). */
  ordered(limit: number): T[] {
    return [...this.live.values()]
      .sort((a, b) => (this.before(a, b) ? -1 : 1))
      .slice(0, limit)
      .map((v) => v.msg);
  }

  private isStale(e: Entry<T>): boolean {
    return this.live.get(e.id) !== e;
  }

  private dropStale(): void {
    while (this.heap.length && this.isStale(this.heap[0])) this.pop();
  }

  private rebuild(): void {
    this.heap = [...this.live.values()];
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private push(e: Entry<T>): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private pop(): Entry<T> | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l], h[m])) m = l;
      if (r < h.length && this.before(h[r], h[m])) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
}
