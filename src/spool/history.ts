// A message's history file: one JSON line per move, appended by the spool's moves, read back for people.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError, isErrno } from '../errors.js';
import { idTime } from '../message/message-id.js';
import type { HistoryLine } from '../ipc/history-line.js';
import type { State } from '../message/states.js';
import type { SpoolFs } from './spool-fs.js';

/** A move (`from`, `to`) or an event without one (`event`: timeout, stall…, rq-beyond §B14), with its details. */
export type HistoryEntry = HistoryLine;

/** Who moved a message and why, for its history line; `details` are the line's extra keys (rq-beyond §B14). */
export interface MoveNote {
  actor: string;
  reason?: string;
  details?: Record<string, unknown>;
}

/**
 * Appends a history line. Not fsynced (history is for people, the state is the directory); a
 * message that has already moved on (an ack, a delete) simply misses the line.
 */
export function appendHistory(sfs: SpoolFs, dir: string, at: number, entry: Omit<HistoryEntry, 'at'>): void {
  const line = JSON.stringify({ at: new Date(at).toISOString(), ...entry }) + '\n';
  try {
    sfs.appendFileSync(path.join(dir, 'history'), line);
  } catch (err) {
    if (!isErrno(err, 'ENOENT')) throw RqError.of('RQ_ERR_DISK', `history line in ${dir}`, (err as Error).message).causedBy(err);
  }
}

/**
 * The history of message `id` in `dir` (where it is, in `state`), or null when the directory does
 * not exist. The create entry is not written (it would cost an inode per create on the hot path);
 * it is implied by the id, whose stamp is the creation time, and it went to where the first
 * recorded move came from (or to where the message still is).
 */
export async function readHistory(dir: string, id: string, state: State): Promise<HistoryEntry[] | null> {
  let text = '';
  try {
    text = await fsp.readFile(path.join(dir, 'history'), 'utf8');
  } catch {
    if (!(await fsp.stat(dir).then((s) => s.isDirectory(), () => false))) return null;
  }
  const entries: HistoryEntry[] = [];
  for (const line of text.split('\n')) {
    try {
      if (line) entries.push(JSON.parse(line) as HistoryEntry);
    } catch {
      // A line torn by a crash mid-append: the others still tell the story.
    }
  }
  const created = idTime(id);
  if (created !== null && entries[0]?.from !== null) {
    entries.unshift({ at: new Date(created).toISOString(), from: null, to: entries[0]?.from ?? state, actor: 'create' });
  }
  return entries;
}
