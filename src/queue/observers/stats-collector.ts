// Statistics per queue and UTC day (rq-beyond §B15.1), kept by subscribing to the queue's events: O(1) per event, nothing inside the dispatcher.
import type { OutcomeName, Totals } from '../../ipc/stats-reply.js';
import { MEMORY_BUCKETS, OUTCOMES } from '../../ipc/stats-reply.js';
import type { Message } from '../../message/message.js';
import { idTime } from '../../message/message-id.js';
import type { QueueEvents } from '../status/queue-events.js';
import { type DayRecord, dayOf, emptyDay, emptyTotals } from './day-stats.js';
import { observe, observeProm } from './distribution.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Done and err per minute of the last hour, in a ring indexed by the minute's number. */
class MinuteRing {
  private readonly slots = Array.from({ length: 60 }, () => ({ minute: -1, done: 0, err: 0 }));

  add(now: number, kind: 'done' | 'err'): void {
    const minute = Math.floor(now / MINUTE_MS);
    const slot = this.slots[minute % 60];
    if (slot.minute !== minute) Object.assign(slot, { minute, done: 0, err: 0 });
    slot[kind]++;
  }

  /** Oldest minute first; index 59 is the current one. */
  series(now: number): { done: number[]; err: number[] } {
    const current = Math.floor(now / MINUTE_MS);
    const done: number[] = [];
    const err: number[] = [];
    for (let m = current - 59; m <= current; m++) {
      const slot = this.slots[((m % 60) + 60) % 60];
      done.push(slot.minute === m ? slot.done : 0);
      err.push(slot.minute === m ? slot.err : 0);
    }
    return { done, err };
  }
}

const outcomeOf = (v: unknown): OutcomeName => (OUTCOMES.includes(v as OutcomeName) ? (v as OutcomeName) : 'failed');

export class StatsCollector {
  private day: DayRecord;
  private totals: Totals = emptyTotals();
  private readonly minutes = new MinuteRing();
  /** When each queued message entered the que (epoch ms), for its wait; insertion order is oldest first. */
  private readonly entered = new Map<string, number>();
  private dirty = false;
  /** The epoch-ms span of `day`: within it, today() needs no date string (an ISO date format takes ~2 µs, and came on every create, move and finish). */
  private daySpan = { from: 0, to: 0 };

  constructor(
    private readonly now: () => number,
    /** Called once per change after a flush (the owner schedules the write); and with the old day when a new UTC day starts. */
    private readonly changed: (endedDay?: DayRecord) => void,
  ) {
    this.day = this.startDay(now());
  }

  /** Today's record and the totals as loaded from disk at start (before any event). */
  restore(day: DayRecord, totals: Totals): void {
    if (day.date === this.day.date) this.day = day;
    this.totals = totals;
  }

  subscribe(events: QueueEvents): void {
    // A fresh message entered the que when it was made (its id's time): `created` comes after the durable write, when it may be running already.
    events.on('created', ({ state }) => {
      if (state === 'que') this.created();
    });
    events.on('moved', (m) => this.moved(m.id, m.from, m.to, m.actor, m.reason, m.details));
    events.on('started', ({ msg }) => this.started(msg));
    events.on('finished', ({ outcome, ms, usage }) => {
      const today = this.today();
      if (ms !== null) {
        observe(today.run, ms / 1000);
        observeProm(this.totals.run, ms / 1000);
      }
      if (usage) {
        const cpuS = (usage.cpu_user_ms + usage.cpu_system_ms) / 1000;
        observe(today.cpu, cpuS);
        observeProm(this.totals.run_cpu, cpuS);
        const peak = usage.memory_peak_bytes;
        if (peak !== undefined) {
          today.memory = { count: today.memory.count + 1, sum: today.memory.sum + peak, max: Math.max(today.memory.max, peak) };
          observeProm(this.totals.run_memory, peak, MEMORY_BUCKETS);
        }
      }
      const kind = outcome.failure;
      if (kind === undefined || kind === 'fatal') return this.touch();
      today.failures++;
      this.totals.failures[kind] = (this.totals.failures[kind] ?? 0) + 1;
      if (kind === 'timeout') today.timeouts++;
      if (kind === 'stalled') today.stalls++;
      if (kind === 'oom') today.ooms++;
      this.touch();
    });
    events.on('removed', ({ id }) => this.entered.delete(id));
  }

  record(): DayRecord {
    return this.today();
  }

  cumulative(): Totals {
    return this.totals;
  }

  perMinute(now = this.now()): { done: number[]; err: number[] } {
    return this.minutes.series(now);
  }

  /** When a queued message entered the que: its last return to it, else its making (an id's time); epoch ms. */
  enteredAt(msg: Message): number {
    return this.entered.get(msg.msg_id) ?? idTime(msg.msg_id) ?? this.now();
  }

  /** True once since the last call when anything changed (the owner's flush asks). */
  takeDirty(): boolean {
    const was = this.dirty;
    this.dirty = false;
    return was;
  }

  /** A flush that failed: the next one writes again. */
  markDirty(): void {
    this.dirty = true;
  }

  private created(): void {
    this.today().created++;
    this.totals.created++;
    this.touch();
  }

  private moved(id: string, from: string, to: string, actor: string, reason?: string, details?: Record<string, unknown>): void {
    // que → run keeps the entry for `started`, which comes after the spawn; a run that never started drops it on leaving run.
    if ((from === 'que' && to !== 'run') || from === 'run') this.entered.delete(id);
    const today = this.today();
    const now = this.now();
    if (to === 'que') {
      this.entered.set(id, now);
      if (from === 'prep') return this.created();
      if (from === 'run' && actor === 'retry') {
        today.retries++;
        this.totals.retries++;
      } else if (from === 'run' && actor === 'recovery') {
        today.interrupts++;
        this.totals.interrupts++;
      } else if (from === 'run' && reason?.startsWith('resend')) {
        today.resends++;
        this.totals.resends++;
      }
    } else if (to === 'done' || to === 'relayed') {
      today[to]++;
      this.totals.finished[to]++;
      if (to === 'done') {
        today.hourly.done[new Date(now).getUTCHours()]++;
        this.minutes.add(now, 'done');
      }
    } else if (to === 'err' && from !== 'err') {
      const outcome = outcomeOf(details?.outcome);
      today.err++;
      today.outcomes[outcome]++;
      this.totals.finished.err[outcome]++;
      today.hourly.err[new Date(now).getUTCHours()]++;
      this.minutes.add(now, 'err');
    }
    this.touch();
  }

  private started(msg: Message): void {
    const now = this.now();
    const today = this.today();
    today.started++;
    const dueMs = typeof msg.due === 'number' ? msg.due * 1000 : 0;
    const entered = this.enteredAt(msg);
    this.entered.delete(msg.msg_id);
    const waitS = Math.max(0, now - Math.max(dueMs, entered)) / 1000;
    observe(today.wait, waitS);
    observeProm(this.totals.wait, waitS);
    this.touch();
  }

  private today(): DayRecord {
    const now = this.now();
    if (now >= this.daySpan.from && now < this.daySpan.to) return this.day;
    // Outside the span is another UTC day (a clock set back included): the record starts again.
    const ended = this.day;
    this.day = this.startDay(now);
    this.changed(ended);
    return this.day;
  }

  /** An empty record of the UTC day holding `now`, whose span today() then checks against. */
  private startDay(now: number): DayRecord {
    const from = now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
    this.daySpan = { from, to: from + DAY_MS };
    return emptyDay(dayOf(now));
  }

  private touch(): void {
    if (this.dirty) return;
    this.dirty = true;
    this.changed();
  }
}
