// The queue's memory of its messages: prep ids, the ordered que, the runs, coalesced messages and the finished counts.
import type { Message } from '../../message/message.js';
import type { FinishedState, StateCounts } from '../../message/states.js';
import { MessageBodies } from '../../spool/message-bodies.js';
import { QueIndex } from './que-index.js';
import { type DeadlineOf, SplitQue } from './split-que.js';
import type { ScriptRun } from '../launch/script-run.js';

/** Who holds a parked message. */
export type ParkOwner = 'depends' | 'limit';

/**
 * Memory follows the disk: every rename between prep/que/run is mirrored here by whoever did it,
 * so lookups of the live states never touch the disk. done/relayed/err are only counted.
 */
export class MessageIndex {
  /** The ones this process created are kept whole, so a commit needs no read. */
  private readonly prep = new Map<string, Message | null>();
  private readonly que: SplitQue;
  private readonly runs = new Map<string, ScriptRun>();
  /** Messages folded into a running one (spec §3.5): on disk in que/, hidden from the que. */
  private readonly coalesced = new Map<string, Message>();
  private readonly finished: Record<FinishedState, number> = { done: 0, relayed: 0, err: 0 };
  /** Messages waiting on dependencies (rq-beyond §B8) or for a limit slot (§B12.3): on disk in que/, out of the que's order. */
  private readonly parked = new Map<string, { msg: Message; owner: ParkOwner }>();
  /** Told when a parked message is taken by someone else (a cancel, a delete), so what it waits for is let go. */
  onUnparked: (id: string, owner: ParkOwner) => void = () => undefined;

  /** `now` (epoch ms) tells due messages from delayed ones; `deadlineOf` gives a queued message's expiry. */
  /** Deadlines of parked messages: waiting does not stop the clock of a message never started (rq-beyond §B4). */
  private readonly parkedDeadlines = new QueIndex<{ msg_id: string; due: number }>('due');

  /** Bodies of messages in que/ stay on disk when `stateDirs` are given (a deep que of large messages). */
  private readonly bodies: MessageBodies | null;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly deadlineOf: DeadlineOf = () => null,
    stateDirs?: { que: string; run: string },
  ) {
    this.que = new SplitQue(now, deadlineOf);
    this.bodies = stateDirs ? new MessageBodies(stateDirs) : null;
  }

  /** Queued and parked messages whose expiry deadline has passed, taken out (a parked one's owner lets go of it). */
  takeExpired(): Message[] {
    const out = this.que.takeExpired();
    for (const m of out) this.bodies?.hydrate(m);
    for (let d = this.parkedDeadlines.peek(); d !== undefined && d.due * 1000 <= this.now(); d = this.parkedDeadlines.peek()) {
      const msg = this.dequeue(d.msg_id);
      if (msg) out.push(msg);
    }
    return out;
  }

  nextDeadline(): number | undefined {
    const parked = this.parkedDeadlines.peek();
    const que = this.que.nextDeadline();
    return parked === undefined ? que : Math.min(parked.due * 1000, que ?? Infinity);
  }

  rekeyDeadlines(): void {
    this.que.rekeyDeadlines();
  }

  addPrep(id: string, msg: Message | null): void {
    this.prep.set(id, msg);
  }

  hasPrep(id: string): boolean {
    return this.prep.has(id);
  }

  /** Removes a prep entry and returns what was known of it (null: only the id), undefined when absent. */
  takePrep(id: string): Message | null | undefined {
    const known = this.prep.get(id);
    this.prep.delete(id);
    return known;
  }

  prepIds(limit: number): string[] {
    return [...this.prep.keys()].slice(0, limit);
  }

  /** Into the que; a message with a large body is held as a light copy (message-bodies.ts), so `queued` may not return this same object. */
  enqueue(msg: Message): void {
    this.que.insert(this.bodies ? this.bodies.lighten(msg) : msg);
  }

  /** Takes a message out of the que, or out of the parked ones (whose slot or place in line then goes back), with its body. */
  dequeue(id: string): Message | undefined {
    const parked = this.parked.get(id);
    if (!parked) {
      const msg = this.que.remove(id);
      if (msg) this.bodies?.hydrate(msg);
      return msg;
    }
    this.unpark(id);
    this.onUnparked(id, parked.owner);
    return parked.msg;
  }

  /** A message out of the que while it waits on dependencies or for a limit slot; its expiry deadline still holds. */
  park(msg: Message, owner: ParkOwner): void {
    // Kept whole: the dependency waits and the limit gate hold this same object and enqueue it later.
    this.parked.set(msg.msg_id, { msg, owner });
    const at = this.deadlineOf(msg);
    if (at !== null) this.parkedDeadlines.insert({ msg_id: msg.msg_id, due: at / 1000 });
  }

  unpark(id: string): Message | undefined {
    const p = this.parked.get(id);
    this.parked.delete(id);
    this.parkedDeadlines.remove(id);
    if (p) this.bodies?.hydrate(p.msg);
    return p?.msg;
  }

  /** A parked message's fields changed (a reschedule, a priority): memory takes them and its expiry deadline follows; false when `id` is not parked. */
  changeParked(id: string, change: Partial<Message>): boolean {
    const p = this.parked.get(id);
    if (!p) return false;
    Object.assign(p.msg, change);
    this.park(p.msg, p.owner);
    return true;
  }

  /** Parked messages, in the order they were parked. */
  parkedMessages(): Message[] {
    return [...this.parked.values()].map((p) => p.msg);
  }

  isQueued(id: string): boolean {
    return this.que.has(id);
  }

  queued(id: string): Message | undefined {
    return this.que.get(id);
  }

  /** The next message in run order (ready by priority, due, arrival; else the earliest delayed), optionally the first one `accept` takes. */
  nextQueued(accept?: (m: Message) => boolean): Message | undefined {
    return accept ? this.que.find(accept) : this.que.peek();
  }

  /** Queued messages matching `match`, in no particular order (coalescing, single_que). */
  queuedWhere(match: (m: Message) => boolean): Message[] {
    return [...this.que.values()].filter(match);
  }

  /** What puts a message first (run now): the first message's due, and its priority. */
  front(): { due: number; priority: number } | undefined {
    return this.que.front();
  }

  queuedInOrder(limit: number): Message[] {
    return this.que.ordered(limit);
  }

  /** Queued messages not yet due, earliest first. */
  delayedInOrder(limit: number): Message[] {
    return this.que.delayedOrdered(limit);
  }

  /** The que split by why each message is not running (rq-beyond §B15.1 `live.que`). */
  queBreakdown(): { ready: number; delayed: number; dependencies: number; limit: number; coalesced: number } {
    let dependencies = 0;
    for (const p of this.parked.values()) if (p.owner === 'depends') dependencies++;
    return { ...this.que.sizes(), dependencies, limit: this.parked.size - dependencies, coalesced: this.coalesced.size };
  }

  /** Queued messages due now, waiting only for a worker. */
  readyCount(): number {
    return this.que.sizes().ready;
  }

  readyMessages(): IterableIterator<Message> {
    return this.que.readyValues();
  }

  coalescedMessages(): IterableIterator<Message> {
    return this.coalesced.values();
  }

  addRun(run: ScriptRun): void {
    this.runs.set(run.msg.msg_id, run);
  }

  run(id: string): ScriptRun | undefined {
    return this.runs.get(id);
  }

  removeRun(id: string): void {
    this.runs.delete(id);
  }

  allRuns(): ScriptRun[] {
    return [...this.runs.values()];
  }

  /** Takes a queued message out of the que into the running `parent`'s fold. */
  fold(msg: Message, parentFullId: string): void {
    this.que.remove(msg.msg_id);
    msg.dup = parentFullId;
    this.coalesced.set(msg.msg_id, msg);
  }

  /** Back to the que (the parent did not finish well). */
  unfold(msg: Message): void {
    delete msg.dup;
    this.coalesced.delete(msg.msg_id);
    this.que.insert(msg);
  }

  /** Gone from que/ with its parent (done or relayed). */
  dropFolded(id: string): void {
    this.coalesced.delete(id);
  }

  isCoalesced(id: string): boolean {
    return this.coalesced.has(id);
  }

  /** Which live state memory holds `id` in, or null (it may still be finished, on disk). */
  liveState(id: string): 'prep' | 'que' | 'run' | null {
    if (this.prep.has(id)) return 'prep';
    if (this.que.has(id) || this.coalesced.has(id) || this.parked.has(id)) return 'que';
    return this.runs.has(id) ? 'run' : null;
  }

  /** The whole message when memory has it (que, coalesced, run). */
  liveMessage(id: string): Message | undefined {
    return this.que.get(id) ?? this.coalesced.get(id) ?? this.parked.get(id)?.msg ?? this.runs.get(id)?.msg;
  }

  setFinished(state: FinishedState, n: number): void {
    this.finished[state] = Math.max(0, n);
  }

  addFinished(state: FinishedState, delta: number): void {
    this.setFinished(state, this.finished[state] + delta);
  }

  counts(): StateCounts {
    return { prep: this.prep.size, que: this.que.size + this.parked.size, run: this.runs.size, ...this.finished };
  }
}
