// queues/<q>/cron.json: per schedule entry, the last occurrence that got its message, written durably.
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ScheduleEntry } from '../../config/queue-config.js';
import { RqError, isErrno } from '../../errors.js';
import { configJsonError, configReadError } from '../../config/schema-error.js';
import { type DirSync, writeFileDurable } from '../../spool/durable.js';

/** One schedule entry's memory. Times are epoch seconds. */
export interface CronRecord {
  /** Identifies the entry: its cron and params, plus n for identical entries (0 for the first). */
  key: string;
  cron: string;
  params: Partial<Record<'param1' | 'param2' | 'param3' | 'param4', string>>;
  /** When rq first saw the entry: occurrences before it are not "missed". */
  since: number;
  /** The last occurrence handled (a message created, or skipped because the queue was DOWN). */
  last: number | null;
  /** The message created for `last`; it may still be in prep if the queue stopped before committing it. */
  msg_id: string | null;
}

export function cronStateFile(queueDir: string): string {
  return path.join(queueDir, 'cron.json');
}

export function scheduleParams(entry: ScheduleEntry): CronRecord['params'] {
  const out: CronRecord['params'] = {};
  for (const p of ['param1', 'param2', 'param3', 'param4'] as const) if (entry[p] !== undefined) out[p] = entry[p];
  return out;
}

/** Editing an entry's cron or params makes it a new entry, with no memory of the old one's occurrences. */
export function cronKey(entry: ScheduleEntry, n: number): string {
  return JSON.stringify([entry.cron, scheduleParams(entry), n]);
}

function isRecord(v: unknown): v is CronRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.key === 'string' &&
    typeof r.since === 'number' &&
    (r.last === null || typeof r.last === 'number') &&
    (r.msg_id === null || typeof r.msg_id === 'string')
  );
}

/** The records of the file; none when it does not exist. Throws RQ_ERR_CONFIG when it is unreadable or malformed. */
export async function readCronState(file: string): Promise<CronRecord[]> {
  let text: string;
  try {
    text = await fsp.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw configReadError(file, err);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw configJsonError(file, err);
  }
  const list = (raw as { schedule?: unknown } | null)?.schedule;
  if (!Array.isArray(list)) throw RqError.of('RQ_ERR_CONFIG', `${file}: expected {"schedule": [...]}`);
  return list.filter(isRecord);
}

export async function writeCronState(file: string, records: readonly CronRecord[], dirSync: DirSync): Promise<void> {
  await writeFileDurable(file, JSON.stringify({ schedule: records }, null, 1) + '\n', dirSync);
}
