// A queue's statistics as the socket serves them (rq-beyond §B15, §B16): the collector loaded from and flushed to disk, the live figures, failure groups.
import type { Logger } from 'pino';
import type { DayStats, LiveStats, QueueMetrics } from '../../ipc/stats-reply.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { StatsFiles } from '../../spool/stats-files.js';
import type { MessageIndex } from '../index/message-index.js';
import type { QueueEvents } from '../status/queue-events.js';
import { type DayRecord, dayOf, reviveDay, reviveTotals } from './day-stats.js';
import { FailureGroups } from './failure-groups.js';
import { SearchIndex } from './search-index.js';
import { StatsCollector } from './stats-collector.js';

/** §B15.2: a crash loses at most this much of the statistics. */
export const FLUSH_MS = 10_000;

export interface StatsRetention {
  days: number;
  histogramDays: number;
}

export interface QueueStatsDeps {
  name: string;
  events: QueueEvents;
  spool: QueueSpool;
  index: MessageIndex;
  now: () => number;
  log: Logger;
  retention: StatsRetention;
}

export class QueueStats {
  readonly collector: StatsCollector;
  readonly groups: FailureGroups;
  readonly search: SearchIndex;
  private readonly files: StatsFiles;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** The day of the last flush: a flush on a new day prunes old files first. */
  private flushedDay: string | null = null;
  private ackedCount: Promise<number> | null = null;

  constructor(private readonly d: QueueStatsDeps) {
    this.files = new StatsFiles(d.spool.paths.statsDir);
    this.collector = new StatsCollector(d.now, (ended) => (ended ? this.writeEnded(ended) : this.schedule()));
    this.collector.subscribe(d.events);
    this.groups = new FailureGroups({ spool: d.spool, events: d.events, log: d.log });
    this.search = new SearchIndex({ spool: d.spool, events: d.events, log: d.log, now: d.now });
    // Leaving err or a removal from it may be an acknowledged message: count the dotted entries again when next asked.
    d.events.on('moved', ({ from }) => from === 'err' && (this.ackedCount = null));
    d.events.on('removed', ({ state }) => state === 'err' && (this.ackedCount = null));
    d.events.on('acked', () => (this.ackedCount = null));
  }

  /** Today's record and the totals, before the recovery scan moves anything. */
  async load(): Promise<void> {
    const today = dayOf(this.d.now());
    const [day, totals] = await Promise.all([this.files.readDay(today), this.files.readTotals()]);
    this.collector.restore(reviveDay(day, today), reviveTotals(totals));
  }

  /** `stats {date?}`: a stored day, or today with its live figures. */
  async reply(date?: string): Promise<DayStats> {
    const today = this.collector.record();
    if (date === undefined || date === today.date) return { queue: this.d.name, ...today, live: await this.live() };
    return { queue: this.d.name, ...reviveDay(await this.files.readDay(date), date) };
  }

  async metrics(status: string, workers: number): Promise<QueueMetrics> {
    const { per_minute: _, ...live } = await this.live();
    return { queue: this.d.name, status, live, workers, running_scripts: live.counts.run, totals: this.collector.cumulative() };
  }

  /** Writes what changed now (at stop, and in tests). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async live(): Promise<LiveStats> {
    const { index } = this.d;
    // One reading of the clock: with nothing ready the age is exactly 0.
    const now = this.d.now();
    let oldest = now;
    for (const msg of index.readyMessages()) oldest = Math.min(oldest, Math.max((Number(msg.due) || 0) * 1000, this.collector.enteredAt(msg)));
    this.ackedCount ??= this.d.spool.listFlat('err', true).then((ids) => ids.length);
    return {
      counts: { ...index.counts(), err_acked: await this.ackedCount },
      que: index.queBreakdown(),
      oldest_ready_s: Math.max(0, now - oldest) / 1000,
      per_minute: this.collector.perMinute(now),
    };
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  private async write(): Promise<void> {
    if (!this.collector.takeDirty()) return;
    const day = this.collector.record();
    try {
      if (this.flushedDay !== day.date) await this.prune(day.date);
      await Promise.all([this.files.writeDay(day.date, day), this.files.writeTotals(this.collector.cumulative())]);
    } catch (err) {
      // Statistics are not state (§B15.2): a full disk costs the next 10 s of them, never a message.
      this.d.log.warn({ err: (err as Error).message }, 'statistics not written; will try again');
      this.collector.markDirty();
      this.schedule();
    }
  }

  private async prune(today: string): Promise<void> {
    this.flushedDay = today;
    const { days, histogramDays } = this.d.retention;
    const { deleted, trimmed } = await this.files.prune(today, days, histogramDays);
    if (deleted.length || trimmed.length) this.d.log.info({ deleted, trimmed }, 'old statistics pruned');
  }

  /** In the flush chain: the ended day and today's flush never write one file at once. */
  private writeEnded(day: DayRecord): void {
    this.flushing = this.flushing
      .then(() => this.files.writeDay(day.date, day))
      .catch((err: Error) => this.d.log.warn({ err: err.message, date: day.date }, 'the ended day of statistics not written'));
    this.schedule();
  }
}
