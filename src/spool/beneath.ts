// Opens files under a message directory as written by a hostile script: no link followed at any component, no special file ever opened.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError, isErrno } from '../errors.js';

/** What a directory entry is; only `file` is ever opened for reading. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device' | 'other';

export function kindOf(e: fs.Stats | fs.BigIntStats | fs.Dirent): EntryKind {
  if (e.isFile()) return 'file';
  if (e.isDirectory()) return 'directory';
  if (e.isSymbolicLink()) return 'symlink';
  if (e.isFIFO()) return 'fifo';
  if (e.isSocket()) return 'socket';
  if (e.isCharacterDevice() || e.isBlockDevice()) return 'device';
  return 'other';
}

const DIR_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO swapped in after the type check opens at once instead of holding a thread-pool thread forever.
const FILE_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/**
 * Node has no openat(2); /proc/self/fd/<fd> names the directory an open handle holds, whatever
 * was renamed or linked in its place since, so a lookup through it is a lookup relative to that
 * handle. rq runs on Linux (cgroups, /proc/<pid> for stale scripts), where /proc is mounted.
 */
const procFd = (fd: number) => `/proc/self/fd/${fd}`;

/** A directory reached without following links; `entry(name)` names a child through the handle. */
export class SafeDir {
  private constructor(private readonly fh: fsp.FileHandle) {}

  /** Opens `base`, then each of `parts` below it, every one as a directory and never through a link. */
  static async open(base: string, parts: readonly string[] = []): Promise<SafeDir> {
    let dir = new SafeDir(await fsp.open(base, DIR_FLAGS));
    for (const part of parts) {
      try {
        const next = new SafeDir(await fsp.open(dir.entry(part), DIR_FLAGS));
        await dir.close();
        dir = next;
      } catch (err) {
        await dir.close();
        throw err;
      }
    }
    return dir;
  }

  /** A path that resolves `name` inside this very directory. */
  entry(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/'))
      throw RqError.of('RQ_ERR_FILE_NOT_FOUND', shownName(name), ': expected a plain file name');
    return `${procFd(this.fh.fd)}/${name}`;
  }

  async list(): Promise<fs.Dirent[]> {
    return fsp.readdir(procFd(this.fh.fd), { withFileTypes: true });
  }

  /** lstat of a child: what the name is, never what it points at. */
  async lstat(name: string): Promise<fs.BigIntStats> {
    return fsp.lstat(this.entry(name), { bigint: true });
  }

  /**
   * Opens a regular file of this directory for reading. Its type is checked before it is opened
   * (a device or FIFO is never opened) and again on the handle (a swap between the two is caught).
   * Anything but a regular file is RQ_ERR_FILE_NOT_FOUND naming what it is.
   */
  async openFile(name: string, what = shownName(name)): Promise<{ fh: fsp.FileHandle; stat: fs.BigIntStats }> {
    let before: fs.BigIntStats;
    try {
      before = await this.lstat(name);
    } catch (err) {
      // Not ENOTDIR: the lookup is of one plain name inside a handle that is a directory.
      if (isErrno(err, 'ENOENT')) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, '');
      throw err;
    }
    const kind = kindOf(before);
    if (kind !== 'file') throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, ` (not a regular file: a ${kind})`);
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(this.entry(name), FILE_FLAGS);
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ELOOP') || isErrno(err, 'ENXIO')) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, '');
      throw err;
    }
    const stat = await fh.stat({ bigint: true });
    if (!stat.isFile() || stat.ino !== before.ino || stat.dev !== before.dev) {
      await fh.close();
      throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, ' (replaced while it was opened)');
    }
    return { fh, stat };
  }

  async close(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }
}

function shownName(name: string): string {
  return JSON.stringify(name);
}

/** Whether an error from SafeDir.open says the directory is missing or is not a plain directory (a link, a file). */
export function isNotPlainDir(err: unknown): boolean {
  return isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR') || isErrno(err, 'ELOOP');
}

/**
 * Opens `parts` (directories, then a regular file) below `base`, no link followed anywhere:
 * the file a URL names in a message directory (`job/stdio.log`, `attach/<name>`).
 */
export async function openBeneath(base: string, parts: readonly string[], what: string): Promise<{ fh: fsp.FileHandle; stat: fs.BigIntStats }> {
  let dir: SafeDir;
  try {
    dir = await SafeDir.open(base, parts.slice(0, -1));
  } catch (err) {
    if (isNotPlainDir(err)) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', what, '');
    throw err;
  }
  try {
    return await dir.openFile(parts[parts.length - 1], what);
  } finally {
    await dir.close();
  }
}

/** The most rq reads of one file it wrote in a message dir: a script may have grown it (or swapped in a sparse giant). */
export const MESSAGE_FILE_MAX_BYTES = 64 * 1024 * 1024;

function tooLarge(name: string, size: bigint | number, max: number): RqError {
  return RqError.of('RQ_ERR_FILE_NOT_FOUND', shownName(name), ` (${size} bytes, more than the ${max} rq reads of a message file)`);
}

/**
 * The text of a file rq wrote in a message dir (`msg`, `status`, `history`, `pid`, ...), read as a
 * script may have left it: a link, anything but a regular file or a file over `max` bytes is
 * RQ_ERR_FILE_NOT_FOUND saying which; a missing one is ENOENT as usual.
 */
export async function readMessageFile(msgDir: string, name: string, max = MESSAGE_FILE_MAX_BYTES): Promise<string> {
  const dir = await SafeDir.open(msgDir);
  try {
    // A missing file stays ENOENT (from lstat), so callers that tell "none" from "broken" keep doing so.
    await dir.lstat(name);
    const opened = await dir.openFile(name);
    try {
      if (opened.stat.size > BigInt(max)) throw tooLarge(name, opened.stat.size, max);
      return await opened.fh.readFile('utf8');
    } finally {
      await opened.fh.close();
    }
  } finally {
    await dir.close();
  }
}

/**
 * readMessageFile for the synchronous paths: only the last component is guarded (the message dir's
 * own path is rq's), with the same type and size checks.
 */
export function readMessageFileSync(file: string, max = MESSAGE_FILE_MAX_BYTES): string {
  const fd = fs.openSync(file, FILE_FLAGS);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw RqError.of('RQ_ERR_FILE_NOT_FOUND', shownName(path.basename(file)), ` (not a regular file: a ${kindOf(st)})`);
    if (st.size > max) throw tooLarge(path.basename(file), st.size, max);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}
