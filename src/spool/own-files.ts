// Opens rq's own files in a message dir for writing as a script may have left them: no link followed, no open that blocks, only a regular file written.
import fs from 'node:fs';
import { RqError, isErrno } from '../errors.js';
import type { SpoolFile, SpoolFs } from './spool-fs.js';

const F = fs.constants;
// O_NOFOLLOW: a link the script put in place of history is not a way to append to another file.
// O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of holding the queue for good.
const GUARD = F.O_NOFOLLOW | F.O_NONBLOCK;
/** 'a' */
export const APPEND = F.O_WRONLY | F.O_CREAT | F.O_APPEND | GUARD;
/** 'w' */
export const TRUNCATE = F.O_WRONLY | F.O_CREAT | F.O_TRUNC | GUARD;
/** 'r+': an existing file, rewritten in place. */
export const UPDATE = F.O_RDWR | GUARD;

/** What the name holds when it is not a regular file: a link, FIFO, socket, directory or device a script left there. */
export function isNotRegular(err: unknown): boolean {
  return isErrno(err, 'ELOOP') || isErrno(err, 'ENXIO') || isErrno(err, 'EISDIR') || (err as { code?: unknown } | null)?.code === 'RQ_ERR_NOT_REGULAR_FILE';
}

function notRegular(file: string): RqError {
  return RqError.of('RQ_ERR_NOT_REGULAR_FILE', file);
}

type SyncFs = Pick<SpoolFs, 'openSync' | 'closeSync' | 'rmSync'>;

/**
 * openSync of one of rq's own files (history, pid, stdio.log). When the name holds anything but a
 * regular file it is removed and the open made once more: the file is rq's, whatever replaced it
 * was not.
 */
export function openOwnSync(sfs: SyncFs, file: string, flags: number, mode = 0o644): number {
  return openOwnSized(sfs, file, flags, mode).fd;
}

/** openOwnSync with the file's size as opened, from the same fstat: where an append starts. */
export function openOwnSized(sfs: SyncFs, file: string, flags: number, mode = 0o644): { fd: number; size: number } {
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = sfs.openSync(file, flags, mode);
      const st = fs.fstatSync(fd);
      if (st.isFile()) return { fd, size: st.size };
      sfs.closeSync(fd);
      throw notRegular(file);
    } catch (err) {
      if (attempt > 0 || !isNotRegular(err)) throw err;
      sfs.rmSync(file, { recursive: true, force: true });
    }
  }
}

/** The same for the asynchronous writes (status, marks, dependency lines). */
export async function openOwn(sfs: Pick<SpoolFs, 'open' | 'rm'>, file: string, flags: number, mode = 0o644): Promise<SpoolFile> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await sfs.open(file, flags, mode);
      if ((await fh.stat()).isFile()) return fh;
      await fh.close();
      throw notRegular(file);
    } catch (err) {
      if (attempt > 0 || !isNotRegular(err)) throw err;
      await sfs.rm(file, { recursive: true, force: true });
    }
  }
}

/** mkdir of a directory rq owns in a message dir (job/): a link or file a script left in its place is removed first. */
export function ownDirSync(sfs: Pick<SpoolFs, 'mkdirSync' | 'rmSync'>, dir: string): void {
  // Looked at first: a blank brings job/ along, and a refused mkdir's error costs more than the lstat.
  if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
  try {
    sfs.mkdirSync(dir);
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
    // Made meanwhile (the run files staged from the thread pool), or a stranger in its place.
    if (fs.lstatSync(dir).isDirectory()) return;
    sfs.rmSync(dir, { force: true });
    sfs.mkdirSync(dir);
  }
}
