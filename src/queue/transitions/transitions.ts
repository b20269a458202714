// The one owner of a waiting message's state: every rename, removal and index change of prep and que goes through here, in one order.
import type { Message } from '../../message/message.js';
import { type FinishedState, type State, isFinished } from '../../message/states.js';
import type { MoveNote, QueueSpool } from '../../spool/queue-spool.js';
import type { Recovered } from '../../spool/recovery.js';
import type { MessageIndex, ParkOwner } from '../index/message-index.js';
import type { WaitMoves } from '../index/wait-moves.js';
import type { QueueEvents } from '../status/queue-events.js';
import { type Finish, type FinishDeps, finishToErr } from './finish.js';

export interface TransitionsDeps extends FinishDeps {
  spool: QueueSpool;
  index: MessageIndex;
  events: QueueEvents;
  /** A message with `depends` waits off the que (true), else it is for the caller to enqueue (false). */
  admit: (msg: Message) => boolean;
  /** Something became runnable: dispatch again. */
  pump: () => void;
}

/**
 * Each method makes one change of state, in this order: the durable step on disk (a rename, a
 * removal), the history line (the spool writes it with the rename), the index and counts, the
 * typed event; and undoes the index change when the disk refused. A move's directory sync is
 * returned, not awaited, where the caller answers before it (a commit makes a message runnable
 * the moment it is renamed).
 */
export class Transitions implements WaitMoves {
  constructor(private readonly d: TransitionsDeps) {}

  /** A message just created in prep or que: memory takes it, observers hear of it, a queued one may start. */
  created(msg: Message, state: 'prep' | 'que'): void {
    if (state === 'prep') this.d.index.addPrep(msg.msg_id, msg);
    else if (!this.d.admit(msg)) this.d.index.enqueue(msg);
    // Told once it is visible and before the pump may start it: an observer hears created before que → run.
    this.d.events.emit('created', { msg, state });
    if (state === 'que') this.d.pump();
  }

  /** A create whose durable step failed after it became visible: memory lets it go and observers hear it is gone. */
  uncreated(id: string, state: 'prep' | 'que'): void {
    if (state === 'que') this.d.index.dequeue(id);
    else this.d.index.takePrep(id);
    this.d.events.emit('removed', { id, state });
  }

  /** prep → que; null when `id` is not in prep. Resolves once renamed, with the rename's sync and whether it waits on dependencies. */
  async commit(id: string): Promise<{ sync: () => Promise<void>; waits: boolean } | null> {
    const { index, spool } = this.d;
    const known = index.takePrep(id);
    if (known === undefined) return null;
    try {
      const msg = known ?? (await spool.readMessage('prep', id));
      const moved = await spool.beginMove(id, 'prep', 'que', { actor: 'commit' });
      const waits = this.d.admit(msg);
      if (!waits) index.enqueue(msg);
      this.d.pump();
      return { sync: moved.sync, waits };
    } catch (err) {
      if (!index.isQueued(id) && !index.run(id) && (await spool.exists('prep', id))) index.addPrep(id, known);
      throw err;
    }
  }

  /** Removes a message in prep, que, err (acked too), done or relayed; memory comes back as it was when the disk refused. */
  async remove(id: string, state: State): Promise<void> {
    const { index, spool } = this.d;
    const prepMsg = state === 'prep' ? index.takePrep(id) : undefined;
    if (state === 'que') index.dequeue(id);
    try {
      await spool.remove(state, id);
    } catch (err) {
      if (state === 'prep') index.addPrep(id, prepMsg ?? null);
      if (state === 'que') index.enqueue(await spool.readMessage('que', id));
      throw err;
    }
    if (isFinished(state) && !id.startsWith('.')) index.addFinished(state, -1);
    this.d.events.emit('removed', { id, state });
  }

  /** err → que with `msg` already written in err/; resolves to the rename's directory sync. */
  async requeue(id: string, msg: Message, acked: boolean, note: MoveNote): Promise<() => Promise<void>> {
    const moved = await this.d.spool.beginMove(id, 'err', 'que', note);
    this.d.index.enqueue(msg);
    if (!acked) this.d.index.addFinished('err', -1);
    this.d.pump();
    return moved.sync;
  }

  /**
   * prep or que (taken out of memory by the caller) → err, or removed with `purge`; observers hear
   * it finished (or was removed). When the disk refuses, a message still where it was is put back.
   */
  async toErr(id: string, from: 'prep' | 'que', msg: Message, f: Finish, known?: Message | null): Promise<void> {
    try {
      await finishToErr(this.d, id, from, msg, f);
    } catch (err) {
      if (await this.d.spool.exists(from, id)) {
        if (from === 'prep') this.d.index.addPrep(id, known ?? null);
        else this.d.index.enqueue(msg);
      }
      throw err;
    }
    if (f.purge) this.d.events.emit('removed', { id, state: from });
    else this.d.events.emit('finished', { msg, outcome: { state: 'err', statusText: f.status }, code: null, signal: null, ms: null });
  }

  /** Out of prep for a change (a cancel): what memory knew of it, undefined when it is not in prep. */
  takePrep(id: string): Message | null | undefined {
    return this.d.index.takePrep(id);
  }

  /** Out of the que, or out of the parked ones (whose slot or place in line then goes back). */
  take(id: string): Message | undefined {
    return this.d.index.dequeue(id);
  }

  /** Queued and parked messages past their expiry deadline, taken out. */
  takeExpired(): Message[] {
    return this.d.index.takeExpired();
  }

  /**
   * A waiting message's fields changed on disk (run now, priority, reschedule): memory takes them
   * wherever the message is now and the que re-sorts it. Without `whole`, only a queued one changes.
   */
  changed(id: string, change: Partial<Message>, whole?: Message): void {
    const { index } = this.d;
    this.d.events.emit('changed', { id, change });
    const queued = index.queued(id);
    if (queued) {
      Object.assign(queued, change);
      index.enqueue(queued);
      this.d.pump();
    } else if (!whole) return;
    else if (index.hasPrep(id)) index.addPrep(id, whole);
    else index.changeParked(id, change);
  }

  /** A prep message whose msg changed on disk (tags): memory forgets what it held, so the next read is fresh. */
  forgetPrep(id: string): void {
    this.d.index.addPrep(id, null);
  }

  park(msg: Message, owner: ParkOwner): void {
    this.d.index.park(msg, owner);
  }

  unpark(id: string): Message | undefined {
    return this.d.index.unpark(id);
  }

  /** A parked message may run: back into the que's order. */
  release(msg: Message): void {
    this.d.index.unpark(msg.msg_id);
    this.d.index.enqueue(msg);
  }

  /** A message the dispatcher took that may not start now goes back into the que. */
  enqueue(msg: Message): void {
    this.d.index.enqueue(msg);
  }

  /** err messages acknowledged (moved to err/.<id>): they no longer count. */
  acked(n: number): void {
    this.d.index.addFinished('err', -n);
  }

  /** The queue's config changed: expiry deadlines (max_age) are worked out again. */
  reconfigured(): void {
    this.d.index.rekeyDeadlines();
  }

  /** At start: memory takes what the recovery scan found; `waits` parks the messages that wait on dependencies. */
  async load(rec: Recovered, counts: Record<FinishedState, number>, waits: (m: Message) => Promise<boolean>): Promise<void> {
    for (const id of rec.prep) this.d.index.addPrep(id, null);
    for (const m of rec.que) if (!(await waits(m))) this.d.index.enqueue(m);
    for (const [s, n] of Object.entries(counts)) this.d.index.setFinished(s as FinishedState, n);
  }
}
