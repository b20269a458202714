// The spool's disk-changing file operations, passed in so tests can observe (or fake) their order.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { errnoError } from '../errors.js';

/** What the spool does with an open file; a node:fs/promises FileHandle is one. */
export interface SpoolFile {
  writeFile(data: string | Uint8Array): Promise<void>;
  /** A string at a byte position (overwrites in place). */
  write(data: string, position: number): Promise<unknown>;
  /** Part of a buffer at `position`, or the current position without one (copies); may write less than asked. */
  write(buffer: Uint8Array, offset: number, length: number, position?: number): Promise<{ bytesWritten: number }>;
  truncate(len: number): Promise<void>;
  sync(): Promise<void>;
  /** fdatasync: the data and what reading it back needs (its size), not the timestamps. */
  datasync(): Promise<void>;
  /** What was opened: a script may have put a FIFO or a device where rq's file was. */
  stat(): Promise<{ isFile(): boolean; nlink: number; size: number }>;
  close(): Promise<void>;
  /** Its descriptor, where it is a real open file (a FileHandle): what SpoolFs.journalSync takes. */
  readonly fd?: number;
}

/**
 * Every call by which the spool creates, changes, removes or fsyncs something on disk. Reads stay
 * on node:fs: they carry no durability. The create path is synchronous up to its rename (see
 * QueueSpool.create), hence the descriptor-based sync calls next to the promise ones.
 */
export interface SpoolFs {
  open(path: string, flags: string | number, mode?: number): Promise<SpoolFile>;
  mkdir(path: string, options?: { recursive?: boolean }): Promise<string | undefined>;
  rename(from: string, to: string): Promise<void>;
  link(existing: string, newPath: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rm(path: string, options: { recursive?: boolean; force?: boolean }): Promise<void>;
  fsync(fd: number): Promise<void>;
  /** Flushes everything written to the filesystem holding `path` (syncfs(2)): one call for a whole checkpoint. */
  syncfs(path: string): Promise<void>;
  openSync(path: string, flags: string | number, mode?: number): number;
  writeFileSync(fd: number, data: string): void;
  /** Cuts an open file back to `len` bytes (what an append the disk refused halfway had added). */
  ftruncateSync(fd: number, len: number): void;
  renameSync(from: string, to: string): void;
  mkdirSync(path: string, options?: { recursive?: boolean }): void;
  rmdirSync(path: string): void;
  rmSync(path: string, options: { recursive?: boolean; force?: boolean }): void;
  closeSync(fd: number): void;
  /**
   * Makes `dirs`, each with `subdirs` and empty `files` (relative to it), in order, in one trip to the thread pool;
   * resolves with the whole ones (fewer: the next one failed, perhaps half made), each as its dir's inode number and,
   * with `keepOpen`, its first file left open for writing (close-on-exec; else -1), the caller's to close. Absent
   * where the addon is not built, and in test doubles: blanks are then made call by call through the methods above.
   */
  makeBlanks?(dirs: string[], subdirs: string[], files: string[], keepOpen: boolean): Promise<[ino: number, fd: number][]>;
  /**
   * One trip to the thread pool each (src/spool/native/rq-fileops.c), where node's fs takes three to
   * ten; absent where the addon is not built, and in test doubles that fault the calls above, which
   * then take the call-by-call path. `stageRun`: message-files.stageRun's files. `overwrite`:
   * durable.overwriteFile, true when it made the file; a name that is not a regular file fails with
   * ELOOP, ENXIO, EISDIR or RQ_ERR_NOT_REGULAR_FILE for the careful path to replace. `fsyncPath`: open, fsync, close.
   */
  stageRun?(dir: string): Promise<void>;
  overwrite?(file: string, text: string, durable: boolean): Promise<boolean>;
  fsyncPath?(path: string): Promise<void>;
  /**
   * A sync thread of its own for the journal file open as `fd` (of `file`, named in errors; `size` bytes long), which
   * writes and fdatasyncs its records in batches and calls `onSettled` on the loop with the last record each batch
   * settled (rq-journal-sync.c). Absent where the addon is not built, and in test doubles.
   */
  journalSync?(
    file: string,
    fd: number,
    size: number,
    onSettled: (upto: number, code?: string, message?: string, syscall?: string, errno?: number) => void,
  ): JournalSyncThread;
}

/** A journal file's sync thread: `append` gives a record its sequence number, `kick` starts a batch if none runs, `close` ends it once all are settled. */
export interface JournalSyncThread {
  append(text: string): number;
  kick(): void;
  close(): Promise<void>;
}

type FileOps = Required<Pick<SpoolFs, 'stageRun' | 'overwrite' | 'fsyncPath'>>;
const fileOps = loadAddon<FileOps>('rq_fileops');
type JournalSyncClass = new (...args: Parameters<NonNullable<SpoolFs['journalSync']>>) => JournalSyncThread;
const JournalSync = loadAddon<{ JournalSync: JournalSyncClass }>('rq_journal_sync')?.JournalSync;

/** The real filesystem: node's own functions, no wrappers, so the hot paths pay nothing for the seam. */
export const nodeSpoolFs: SpoolFs = {
  open: fsp.open,
  mkdir: fsp.mkdir,
  rename: fsp.rename,
  link: fsp.link,
  unlink: fsp.unlink,
  rm: fsp.rm,
  fsync: promisify(fs.fsync),
  syncfs,
  openSync: fs.openSync,
  writeFileSync: fs.writeFileSync,
  ftruncateSync: fs.ftruncateSync,
  renameSync: fs.renameSync,
  mkdirSync: fs.mkdirSync,
  rmSync: fs.rmSync,
  rmdirSync: fs.rmdirSync,
  closeSync: fs.closeSync,
  makeBlanks: loadAddon<{ makeBlanks: NonNullable<SpoolFs['makeBlanks']> }>('rq_blanks')?.makeBlanks,
  stageRun: fileOps?.stageRun,
  overwrite: fileOps?.overwrite,
  fsyncPath: fileOps?.fsyncPath,
  journalSync: JournalSync && ((...args) => new JournalSync(...args)),
};

/** An addon `npm run build-native` built (src/spool/native/), found from src/spool/ and dist/spool/ alike; null without one. */
function loadAddon<T>(name: string): T | null {
  try {
    return createRequire(import.meta.url)(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'build', 'Release', `${name}.node`)) as T;
  } catch {
    return null;
  }
}

const nativeSyncfs = loadAddon<{ syncfs: (dir: string) => Promise<void> }>('rq_syncfs')?.syncfs;

/**
 * syncfs(2) of the filesystem holding `dir`: the addon on the thread pool, else coreutils' `sync -f`
 * (a fork of the whole process per call: a build without a compiler pays that per checkpoint).
 */
function syncfs(dir: string): Promise<void> {
  if (nativeSyncfs) {
    return nativeSyncfs(dir).catch((err: NodeJS.ErrnoException) => {
      throw errnoError(err.code ?? 'EIO', `syncfs ${dir}: ${err.message}`);
    });
  }
  return new Promise((resolve, reject) => {
    execFile('sync', ['-f', dir], (err, _out, stderr) => (err ? reject(errnoError('EIO', `sync -f ${dir}: ${stderr.trim() || err.message}`)) : resolve()));
  });
}
