// Cron expressions of a queue's `schedule` (spec §15), parsed by croner: 5 fields, 6 with seconds, or @hourly-style.
import { Cron } from 'croner';
import { RqError } from '../../errors.js';

export interface CronExpression {
  readonly source: string;
  /** The first occurrence strictly after `afterMs` (epoch ms), or null when there is none (e.g. a past date). */
  nextAfter(afterMs: number): number | null;
  /** The latest occurrence at or before `atMs`, or null. */
  latestAtOrBefore(atMs: number): number | null;
}

/**
 * Parses an expression in local time. Day-of-month and day-of-week combine with OR when both are
 * restricted, as in Vixie cron and the classic parse-cron gem. Throws RQ_ERR_CONFIG naming `field`.
 */
export function parseCron(source: string, field: string): CronExpression {
  let cron: Cron;
  try {
    // No callback: croner only computes dates and never starts a timer of its own.
    cron = new Cron(source.trim(), { mode: '5-or-6-parts', domAndDow: false });
  } catch (err) {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^CronPattern: /, '');
    throw RqError.of(
      'RQ_ERR_CONFIG',
      `${field}: expected a cron expression (5 fields, 6 with seconds first, or @hourly/@daily/@weekly/@monthly/@yearly), received ${JSON.stringify(source)}: ${reason}`,
    ).causedBy(err);
  }
  return {
    source,
    nextAfter: (afterMs) => cron.nextRun(new Date(afterMs))?.getTime() ?? null,
    // previousRuns excludes a run exactly at the reference; one ms later includes it.
    latestAtOrBefore: (atMs) => cron.previousRuns(1, new Date(atMs + 1))[0]?.getTime() ?? null,
  };
}
