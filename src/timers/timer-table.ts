// The live timers: their schedules, one setTimeout for the earliest, firing, and retries of failed deliveries.
import type { Logger } from 'pino';
import type { TimerConfig } from '../config/timer-config.js';
import type { CreateFields } from '../message/message.js';
import { type BackoffPolicy, backoffDelay, timerDelay } from '../backoff.js';
import type { Deliver, DeliveryResult } from './timer-delivery.js';
import type { TimerUndelivered } from '../ipc/timers-client.js';
import { type Schedule, afterFire, newSchedule, occurrenceAt, resumeAt, withPeriod } from './timer-schedule.js';
import { JOB_FIELDS } from '../message/job-fields.js';

/** The counters `get_status` reports. */
export interface TimerStats {
  sent: number;
  errors: number;
  invalid: number;
}

export function newStats(): TimerStats {
  return { sent: 0, errors: 0, invalid: 0 };
}

interface Retry {
  occurrence: number;
  attempt: number;
  at: number;
}

interface TimerState {
  name: string;
  /** The timers/ entry that defines it, e.g. `cleaner.json`. */
  file: string;
  /** Null while its file is invalid: it does not fire, but keeps its place in time. */
  config: TimerConfig | null;
  sched: Schedule;
  retry: Retry | null;
  /** A delivery is in flight; nothing else is sent for this timer until it ends. */
  sending: boolean;
  /** The last delivery of this definition failed: which occurrence, and why. Cleared by one that succeeds, or a new definition. */
  undelivered: { occurrence: number; error: string } | null;
}

export interface TimerTableDeps {
  deliver: Deliver;
  stats: TimerStats;
  log: Logger;
  now?: () => number;
  backoff?: BackoffPolicy;
}

/** A failed delivery is tried again 1 s, 2 s, 4 s … up to a minute later: quick when a queue is just restarting, gentle when it stays down. */
export const DELIVERY_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 60_000 };

export class TimerTable {
  private readonly timers = new Map<string, TimerState>();
  private readonly now: () => number;
  private readonly inFlight = new Set<Promise<void>>();
  private wake: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  private closed = false;

  constructor(private readonly deps: TimerTableDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The file currently defining timer `name`, if any (valid or suspended). */
  fileOf(name: string): string | null {
    return this.timers.get(name)?.file ?? null;
  }

  /** The timers/ entries that define timers (valid or suspended). */
  files(): string[] {
    return [...this.timers.values()].map((t) => t.file);
  }

  /**
   * Adds or replaces a definition. A new timer fires right away; a replaced one keeps its
   * schedule (see withPeriod), so an edit never fires twice or out of turn.
   */
  define(name: string, file: string, config: TimerConfig): 'added' | 'changed' | 'unchanged' {
    const now = this.now();
    const periodMs = config.period * 1000;
    const t = this.timers.get(name);
    if (!t) {
      this.timers.set(name, { name, file, config, sched: newSchedule(now, periodMs), retry: null, sending: false, undelivered: null });
      this.deps.log.info({ timer: name, file, period: config.period, dest: config.msg.dest }, 'timer added; fires now');
      this.arm();
      return 'added';
    }
    if (t.file === file && t.config !== null && JSON.stringify(t.config) === JSON.stringify(config)) return 'unchanged';
    const resumed = t.config === null;
    t.file = file;
    t.config = config;
    t.undelivered = null;
    t.sched = withPeriod(resumed ? resumeAt(t.sched, now) : t.sched, periodMs, now);
    this.deps.log.info(
      { timer: name, file, period: config.period, dest: config.msg.dest, next: new Date(t.sched.next).toISOString() },
      resumed ? 'timer valid again; resumes its schedule' : 'timer changed',
    );
    this.arm();
    return 'changed';
  }

  /** The file became invalid: stop firing, but remember the schedule in case it is fixed. */
  suspend(name: string): void {
    const t = this.timers.get(name);
    if (!t || t.config === null) return;
    t.config = null;
    if (t.retry)
      this.deps.log.warn({ timer: name, occurrence: new Date(t.retry.occurrence).toISOString() }, 'timer suspended; its undelivered occurrence is dropped');
    t.retry = null;
    t.undelivered = null;
    this.arm();
  }

  /** The link is gone: forget the timer. */
  remove(name: string): void {
    if (!this.timers.delete(name)) return;
    this.deps.log.info({ timer: name }, 'timer removed');
    this.arm();
  }

  /** Active timers as `[name, due epoch seconds]`, soonest first (the `get_timers` reply). */
  list(): [string, number][] {
    return [...this.timers.values()]
      .filter((t) => t.config !== null)
      .sort((a, b) => a.sched.next - b.sched.next || a.name.localeCompare(b.name))
      .map((t) => [t.name, t.sched.next / 1000]);
  }

  /** Timers whose last delivery failed, by file name (the `get_undelivered` reply, what `rq doctor` lists). */
  undelivered(): TimerUndelivered[] {
    return [...this.timers.values()]
      .filter((t) => t.undelivered !== null)
      .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
      .map((t) => ({ file: t.file, occurrence: t.undelivered!.occurrence / 1000, error: t.undelivered!.error }));
  }

  /** Stops firing and waits for deliveries in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    await Promise.all(this.inFlight);
  }

  private wakeTimeOf(t: TimerState): number {
    if (t.config === null || t.sending) return Infinity;
    return Math.min(t.sched.next, t.retry?.at ?? Infinity);
  }

  /** One timer for the whole table, set for the earliest thing to do. */
  private arm(): void {
    if (this.closed) return;
    let at = Infinity;
    for (const t of this.timers.values()) at = Math.min(at, this.wakeTimeOf(t));
    if (at === this.wakeAt && this.wake) return;
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    this.wakeAt = at;
    if (at === Infinity) return;
    // A later wake than a timer holds re-arms then.
    const delay = timerDelay(at - this.now());
    this.wake = setTimeout(() => {
      this.wake = null;
      this.wakeAt = Infinity;
      this.fireDue();
    }, delay);
  }

  private fireDue(): void {
    const now = this.now();
    for (const t of this.timers.values()) {
      if (t.config === null || t.sending) continue;
      if (t.sched.next <= now) {
        const occurrence = occurrenceAt(t.sched, now);
        if (t.retry) {
          this.deps.log.warn(
            { timer: t.name, lost: new Date(t.retry.occurrence).toISOString(), by: new Date(occurrence).toISOString() },
            'undelivered occurrence superseded by the next one',
          );
          t.retry = null;
        }
        t.sched = afterFire(t.sched, occurrence, now);
        this.send(t, occurrence, 0);
      } else if (t.retry && t.retry.at <= now) {
        this.send(t, t.retry.occurrence, t.retry.attempt);
      }
    }
    this.arm();
  }

  private send(t: TimerState, occurrence: number, attempt: number): void {
    const config = t.config!;
    const fields: CreateFields = { dest: config.msg.dest, src: config.msg.src ?? `timer:${t.name}`, due: occurrence / 1000 };
    for (const p of ['param1', 'param2', 'param3', 'param4', ...JOB_FIELDS] as const)
      if (config.msg[p] !== undefined) Object.assign(fields, { [p]: config.msg[p] });
    t.sending = true;
    t.retry = null;
    // A throwing deliverer is a failed delivery like any other, never an unhandled rejection.
    const attemptResult = Promise.resolve()
      .then(() => this.deps.deliver(fields))
      .catch((err: unknown): DeliveryResult => ({ ok: false, error: err instanceof Error ? err.message : String(err) }));
    const p = attemptResult.then((result) => {
      t.sending = false;
      const log = this.deps.log.child({ timer: t.name, occurrence: new Date(occurrence).toISOString(), attempt });
      t.undelivered = result.ok ? null : { occurrence, error: result.error };
      if (result.ok) {
        this.deps.stats.sent++;
        log.info({ msg_id: result.id, late_ms: this.now() - occurrence }, 'timer message sent');
      } else {
        this.deps.stats.errors++;
        this.scheduleRetry(t, occurrence, attempt, result.error, log);
      }
      this.arm();
    });
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Retries the same occurrence with back-off, unless the next occurrence would come first and supersede it. */
  private scheduleRetry(t: TimerState, occurrence: number, attempt: number, error: string, log: Logger): void {
    if (this.timers.get(t.name) !== t || t.config === null) {
      log.warn({ error }, 'timer message not delivered; the timer is gone, so it is not retried');
      return;
    }
    const at = this.now() + backoffDelay(attempt, this.deps.backoff ?? DELIVERY_BACKOFF);
    if (at >= t.sched.next) {
      log.warn({ error, next: new Date(t.sched.next).toISOString() }, 'timer message not delivered; the next occurrence supersedes it');
      return;
    }
    t.retry = { occurrence, attempt: attempt + 1, at };
    log.warn({ error, retry_in_ms: at - this.now() }, 'timer message not delivered; will retry');
  }
}
