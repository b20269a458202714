// Bulk actions: retry, delete, acknowledge or move many messages, in batches, each message through the queue's own single-message command, with progress events and a summary.
import { RqError } from '../../errors.js';
import { mapLimit } from '../../spool/map-limit.js';
import { BULK_OPS, type BulkJob, type BulkOp, type BulkTarget } from '../../ipc/bulk-reply.js';
import type { QueueEvents } from '../status/queue-events.js';

export { BULK_OPS, type BulkJob, type BulkOp, type BulkTarget };

/** Messages per batch: one progress event each, and the event loop is yielded between batches so the queue keeps answering. */
const BATCH = 100;
/** Messages of a batch in flight at once (their fsyncs overlap). */
const LANES = 8;
/** Jobs kept for bulk_status after they finish (memory only: a restarted queue forgets them). */
const KEPT = 20;
const EXAMPLES = 5;

/** One message's action: resolves when it changed, rejects (an RqError, or a refusal text) when it was skipped. */
export type BulkStep = (t: BulkTarget) => Promise<void>;

export class BulkRunner {
  private readonly jobs = new Map<string, BulkJob>();
  private seq = 0;

  constructor(private readonly d: { events: QueueEvents; now: () => number }) {}

  /** Jobs under way and the last ones finished, newest first. */
  list(): BulkJob[] {
    return [...this.jobs.values()].reverse();
  }

  get(job: string): BulkJob | undefined {
    return this.jobs.get(job);
  }

  /** Starts a job at once; its batches run in the background. */
  start(op: BulkOp, targets: BulkTarget[], step: BulkStep, dest?: string): BulkJob {
    const job: BulkJob = {
      job: `${this.d.now().toString(36)}-${++this.seq}`,
      op,
      ...(dest ? { dest } : {}),
      total: targets.length,
      done: 0,
      changed: 0,
      skipped: {},
      examples: {},
      state: 'running',
      started_at: this.d.now(),
    };
    this.jobs.set(job.job, job);
    for (const old of [...this.jobs.keys()].slice(0, Math.max(0, this.jobs.size - KEPT))) if (this.jobs.get(old)!.state === 'finished') this.jobs.delete(old);
    void this.run(job, targets, step);
    return job;
  }

  /** Resolves with the job once it has moved past `seen` messages or finished, or after `waitMs` (a long poll, no timer loop). */
  async waitPast(job: BulkJob, seen: number, waitMs: number): Promise<BulkJob> {
    if (job.done > seen || job.state === 'finished' || waitMs === 0) return job;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.d.events.off('bulk', on);
        resolve(job);
      };
      const on = ({ job: j }: { job: BulkJob }) => j.job === job.job && (j.done > seen || j.state === 'finished') && done();
      const timer = setTimeout(done, waitMs);
      this.d.events.on('bulk', on);
    });
  }

  private async run(job: BulkJob, targets: BulkTarget[], step: BulkStep): Promise<void> {
    for (let i = 0; i < targets.length; i += BATCH) {
      await mapLimit(targets.slice(i, i + BATCH), LANES, async (t) => {
        try {
          await step(t);
          job.changed++;
        } catch (err) {
          const reason = err instanceof RqError || err instanceof Error ? err.message : String(err);
          job.skipped[reason] = (job.skipped[reason] ?? 0) + 1;
          // Its code travels with the reason, so a client gives the skip its status without reading the text.
          (job.codes ??= {})[reason] ??= err instanceof RqError ? err.code : 'RQ_ERR_INTERNAL';
          const ex = (job.examples[reason] ??= []);
          if (ex.length < EXAMPLES) ex.push(t.id);
        }
        job.done++;
      });
      if (job.done < job.total) {
        this.d.events.emit('bulk', { job: { ...job } });
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    job.state = 'finished';
    job.finished_at = this.d.now();
    this.d.events.emit('bulk', { job: { ...job } });
  }
}
