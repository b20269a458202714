// The days a queue has statistics for (rq-beyond §B15.2: `queues/<q>/stats/<YYYYMMDD>.json`), and the days either side of one, for the stats page's navigation.
import fsp from 'node:fs/promises';
import { queuePaths } from '../config/paths.js';
import { dayOf } from '../queue/observers/day-stats.js';
import { dayStartMs } from './stats-series.js';

const DAY_FILE = /^(\d{8})\.json$/;
const DAY_MS = 86_400_000;

/** Stored days, newest first (none when the directory is missing or unreadable: statistics are not state). */
export async function storedDays(root: string, queue: string): Promise<string[]> {
  const names = await fsp.readdir(queuePaths(root, queue).statsDir).catch(() => [] as string[]);
  return names
    .map((n) => DAY_FILE.exec(n)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort()
    .reverse();
}

export function dayBefore(date: string): string {
  return dayOf(dayStartMs(date) - DAY_MS);
}

export function dayAfter(date: string): string {
  return dayOf(dayStartMs(date) + DAY_MS);
}
