// A message's history file: one JSON line per move, appended by the spool's moves, read back for people.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError, isErrno } from '../errors.js';
import { idTime } from '../message/message-id.js';
import type { HistoryLine } from '../ipc/history-line.js';
import type { State } from '../message/states.js';
import type { SpoolFs } from './spool-fs.js';
import { readMessageFile } from './beneath.js';
import { APPEND, openOwnSized } from './own-files.js';

/** A move (`from`, `to`) or an event without one (`event`: timeout, stall…, rq-beyond §B14), with its details. */
export type HistoryEntry = HistoryLine;

/** Who moved a message and why, for its history line; `details` are the line's extra keys (rq-beyond §B14). */
export interface MoveNote {
  actor: string;
  reason?: string;
  details?: Record<string, unknown>;
  /** The mover writes the line itself once it knows more (que → run: after the spawn, with the pid). */
  lineLater?: boolean;
}

/** Past this size the file becomes `history.1` (one generation kept) and a new one starts (§B14). */
export const HISTORY_ROTATE_BYTES = 1024 * 1024;

/**
 * Appends a history line. Not fsynced, and never thrown: history is for people, the state is the
 * directory (§B14), so a full disk costs a line, not a move that already happened, nor the lines
 * before it: the part of a line written before the disk refused the rest is cut off again, since
 * left there it would swallow the next line. A message that has moved on (an ack, a delete)
 * simply misses the line; other failures go to `failed`. The size check is an fstat of the
 * descriptor already open for the append, so a message that resends itself forever keeps at most
 * two files of about 1 MiB.
 */
export function appendHistory(
  sfs: SpoolFs,
  dir: string,
  at: number,
  entry: Omit<HistoryEntry, 'at'>,
  failed: (err: RqError) => void,
  rotateBytes = HISTORY_ROTATE_BYTES,
): void {
  const line = JSON.stringify({ at: new Date(at).toISOString(), ...entry }) + '\n';
  const file = path.join(dir, 'history');
  /** The open file, and its size before the line: where a refused append is cut back to. */
  let opened: { fd: number; size: number } | null = null;
  try {
    opened = openOwnSized(sfs, file, APPEND);
    if (opened.size + Buffer.byteLength(line) > rotateBytes) {
      sfs.closeSync(opened.fd);
      opened = null;
      sfs.renameSync(file, `${file}.1`);
      opened = openOwnSized(sfs, file, APPEND);
    }
    sfs.writeFileSync(opened.fd, line);
  } catch (err) {
    if (opened) cutBack(sfs, opened.fd, opened.size);
    if (!isErrno(err, 'ENOENT')) failed(RqError.of('RQ_ERR_DISK', `history line in ${dir}`, (err as Error).message).causedBy(err));
  } finally {
    if (opened) sfs.closeSync(opened.fd);
  }
}

/** Cuts off what a refused append wrote. Should that fail too, the fragment stays: it and the next line are lost to readers, the lines before are not. */
function cutBack(sfs: SpoolFs, fd: number, size: number): void {
  try {
    sfs.ftruncateSync(fd, size);
  } catch {
    // Nothing more to do for a file that is for people.
  }
}

/** A history file as a script may have left it (a FIFO or a link reads as none). */
async function readLines(dir: string, name: string): Promise<string | null> {
  return readMessageFile(dir, name).catch(() => null);
}

/**
 * The history of message `id` in `dir` (where it is, in `state`), or null when the directory does
 * not exist. The create entry is not written (it would cost an inode per create on the hot path);
 * it is implied by the id, whose stamp is the creation time, and it went to where the first
 * recorded move came from (or to where the message still is). A rotated `history.1` comes first.
 */
export async function readHistory(dir: string, id: string, state: State): Promise<HistoryEntry[] | null> {
  const [older, current] = await Promise.all([readLines(dir, 'history.1'), readLines(dir, 'history')]);
  if (
    current === null &&
    !(await fsp.stat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    return null;
  // A line torn at the end of history.1 stays on its own line, so it cannot swallow the first one of history.
  const text = older && !older.endsWith('\n') ? `${older}\n${current ?? ''}` : (older ?? '') + (current ?? '');
  const entries: HistoryEntry[] = [];
  for (const line of text.split('\n')) {
    try {
      if (line) entries.push(JSON.parse(line) as HistoryEntry);
    } catch {
      // A line torn by a crash mid-append: the others still tell the story.
    }
  }
  const created = idTime(id);
  // Events (a reschedule, a priority) carry no `from`: the create went where the first move left from.
  const firstMove = entries.find((e) => e.from !== undefined);
  if (created !== null && firstMove?.from !== null) {
    entries.unshift({ at: new Date(created).toISOString(), from: null, to: firstMove?.from ?? state, actor: 'create' });
  }
  return entries;
}
