// A queue's cron `schedule` (spec §15), run inside the queue process: exactly one message per occurrence, across restarts.
import type { Logger } from 'pino';
import type { ScheduleEntry } from '../../config/queue-config.js';
import type { CreateFields, Message } from '../../message/message.js';
import { DirSync } from '../../spool/durable.js';
import { type CronExpression, parseCron } from './cron-expression.js';
import { type CronRecord, cronKey, readCronState, scheduleParams, writeCronState } from './cron-state.js';
import { timerDelay } from '../../backoff.js';

/** What the scheduler needs of the queue (queue-main adapts Queue to it): create, commit, prep ids and the admin status. */
export interface CronQueue {
  readonly name: string;
  hasPrep(id: string): boolean;
  isDown(): boolean;
  create(fields: CreateFields, commit: boolean): Promise<Message>;
  commit(id: string): Promise<boolean>;
}

export interface QueueCronDeps {
  queue: CronQueue;
  /** queues/<q>/cron.json (cronStateFile). */
  stateFile: string;
  log: Logger;
  now?: () => number;
  dirSync?: DirSync;
}

interface Entry {
  record: CronRecord;
  expr: CronExpression;
  /** The next occurrence to fire (epoch ms), or null when the expression has no future occurrence. */
  next: number | null;
}

export class QueueCron {
  private entries: Entry[] = [];
  /** Every change of state runs here, one at a time: start, reconfigure, each wake. */
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly now: () => number;
  private readonly dirSync: DirSync;

  constructor(private readonly deps: QueueCronDeps) {
    this.now = deps.now ?? Date.now;
    this.dirSync = deps.dirSync ?? new DirSync();
  }

  /** At queue start, after recovery: finishes an interrupted fire, catches up the latest missed occurrence, arms. */
  start(schedule: readonly ScheduleEntry[]): Promise<void> {
    return this.serially(() => this.apply(schedule, true));
  }

  /** SIGHUP with a new config: entries that did not change keep their memory. */
  reconfigure(schedule: readonly ScheduleEntry[]): Promise<void> {
    return this.serially(() => this.apply(schedule, false));
  }

  /** No more messages; waits for a fire in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }

  /** The next occurrence of each entry, for logs and status pages. */
  upcoming(): { cron: string; next: number | null }[] {
    return this.entries.map((e) => ({ cron: e.record.cron, next: e.next }));
  }

  private serially(fn: () => Promise<void>): Promise<void> {
    const run = this.chain.then(async () => {
      if (this.stopped) return;
      try {
        await fn();
      } catch (err) {
        this.deps.log.error({ err }, 'cron schedule failed');
      }
    });
    this.chain = run;
    return run;
  }

  private async apply(schedule: readonly ScheduleEntry[], starting: boolean): Promise<void> {
    const { log, queue } = this.deps;
    const now = this.now();
    let known: CronRecord[] = this.entries.map((e) => e.record);
    if (starting) {
      try {
        known = await readCronState(this.deps.stateFile);
      } catch (err) {
        log.error({ err: (err as Error).message }, 'cron.json unreadable; starting without it: occurrences missed while stopped are not caught up');
        known = [];
      }
    }
    const byKey = new Map(known.map((r) => [r.key, r]));
    const seen = new Map<string, number>();
    const entries: Entry[] = [];
    schedule.forEach((entry, i) => {
      let expr: CronExpression;
      try {
        expr = parseCron(entry.cron, `${queue.name}: config.json: schedule[${i}].cron`);
      } catch (err) {
        log.error({ err: (err as Error).message }, 'schedule entry ignored');
        return;
      }
      const base = cronKey(entry, 0);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      const key = cronKey(entry, n);
      const record = byKey.get(key) ?? { key, cron: entry.cron, params: scheduleParams(entry), since: Math.floor(now / 1000), last: null, msg_id: null };
      entries.push({ record, expr, next: null });
    });
    this.entries = entries;

    if (starting) {
      // The queue stopped between recording a message and committing it: commit it now, never create a second one.
      for (const e of entries) {
        const id = e.record.msg_id;
        if (id && queue.hasPrep(id) && (await queue.commit(id)))
          log.info({ msg_id: id, occurrence: e.record.last, cron: e.record.cron }, 'committed the cron message an earlier stop left in prep');
      }
    }
    // A queue without a schedule, now or before, gets no cron.json.
    if (entries.length > 0 || known.length > 0) await this.save();

    for (const e of entries) {
      const handled = handledUntil(e.record);
      const latest = e.expr.latestAtOrBefore(now);
      // Only the latest missed occurrence gets a message: a queue down for a day must not flood itself.
      if (latest !== null && latest > handled) {
        const why = starting ? 'missed while the queue was stopped' : 'due during the reload';
        log.info({ cron: e.record.cron, occurrence: new Date(latest).toISOString() }, `cron occurrence ${why}; creating one message for the latest`);
        await this.fire(e, latest);
      }
      e.next = e.expr.nextAfter(Math.max(now, handledUntil(e.record)));
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let at = Infinity;
    for (const e of this.entries) if (e.next !== null) at = Math.min(at, e.next);
    if (at === Infinity) return;
    // A later wake than a timer holds re-arms then.
    const delay = timerDelay(at - this.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.serially(() => this.wake());
    }, delay);
  }

  private async wake(): Promise<void> {
    const now = this.now();
    for (const e of this.entries) {
      if (e.next === null || e.next > now) continue;
      // After a stall several occurrences may have passed; one message, for the latest.
      const occurrence = Math.max(e.next, e.expr.latestAtOrBefore(now) ?? e.next);
      await this.fire(e, occurrence);
      // From the occurrence, not from the clock: an entry due while another was firing is not skipped.
      e.next = e.expr.nextAfter(Math.max(occurrence, handledUntil(e.record)));
    }
    this.arm();
  }

  /**
   * Creates the occurrence's message in prep, records it durably, then commits it. A stop between
   * any two steps leaves either no record (the restart's catch-up creates it; the orphan stays in
   * prep) or a record naming a prep message (the restart commits it): never two messages.
   */
  private async fire(e: Entry, occurrence: number): Promise<void> {
    const { log, queue } = this.deps;
    const due = Math.floor(occurrence / 1000);
    const where = { cron: e.record.cron, occurrence: new Date(occurrence).toISOString() };
    if (queue.isDown()) {
      log.warn(where, 'queue is DOWN: cron occurrence skipped');
      e.record.last = due;
      e.record.msg_id = null;
      await this.save();
      return;
    }
    let msg: Message;
    try {
      msg = await queue.create({ dest: queue.name, src: 'cron', due, ...e.record.params }, false);
    } catch (err) {
      log.error({ ...where, err: (err as Error).message }, 'cron message not created');
      return;
    }
    e.record.last = due;
    e.record.msg_id = msg.msg_id;
    try {
      await this.save();
    } catch (err) {
      // Delivering beats holding it back: a duplicate needs this failure and a crash before the next save.
      log.error({ ...where, err: (err as Error).message, msg_id: msg.msg_id }, 'cron.json not written; committing the message anyway');
    }
    await queue.commit(msg.msg_id);
    log.info({ ...where, msg_id: msg.msg_id, late_ms: this.now() - occurrence }, 'cron message created');
  }

  private save(): Promise<void> {
    return writeCronState(
      this.deps.stateFile,
      this.entries.map((e) => e.record),
      this.dirSync,
    );
  }
}

/** Epoch ms up to which the entry's occurrences are handled: its last one, or when it was first seen. */
function handledUntil(r: CronRecord): number {
  return Math.max(r.last ?? -Infinity, r.since) * 1000;
}
