// Attachments of a message: hard link (or checksummed copy across filesystems), md5 + size, delete.
import fsp from 'node:fs/promises';
import { type BigIntStats, createReadStream, constants as FS } from 'node:fs';
import { createHash } from '../lazy-builtins.js';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { attachmentNameProblem } from '../message/names.js';
import { type LazySums, keepsSum, keptSum, sumName, writeSum } from './attachment-sums.js';
import { type EntryKind, SafeDir, isNotPlainDir, kindOf } from './beneath.js';
import { DirSync, fsyncPath, mkdirDurable } from './durable.js';
import type { SpoolFs } from './spool-fs.js';
import { writeAll } from './write-all.js';
import { RqError, isErrno } from '../errors.js';

export interface AttachmentInfo {
  /** null when rq kept no sum for this file and it is over the bound for computing one, or not a regular file. */
  md5: string | null;
  /** null when not a regular file. */
  size: number | null;
  path: string;
  /** Present only for what is not a regular file: what the script left there. */
  type?: Exclude<EntryKind, 'file'>;
}

/** md5 and size of a file, streamed; `onChunk` sees every chunk in order (a copy writes them out). */
export async function md5File(file: string, onChunk?: (chunk: Buffer) => Promise<void>): Promise<{ md5: string; size: number }> {
  const hash = createHash('md5');
  let size = 0;
  await pipeline(
    createReadStream(file),
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        size += chunk.length;
        if (onChunk) onChunk(chunk).then(() => cb(), cb);
        else cb();
      },
    }),
  );
  return { md5: hash.digest('hex'), size };
}

/**
 * Checks the source as the classic daemon does (spec §2.4) and returns the stored name (the name
 * given, else the source's own) and the file to store: a symlink's target, since a hard link of the
 * link itself would store a link the message could not serve (a relative one not even resolve).
 */
async function checkSource(source: string, name: string | undefined): Promise<{ stored: string; file: string }> {
  if (!path.isAbsolute(source) || path.normalize(source) !== source) {
    throw RqError.of('RQ_ERR_ATTACH_REFUSED', `Invalid pathname, must be normalized ${source} (ie. must start with /`);
  }
  let st;
  try {
    st = await fsp.stat(source);
  } catch {
    throw RqError.of('RQ_ERR_ATTACH_REFUSED', `No such file ${source} to attach to message`);
  }
  if (st.isDirectory()) throw RqError.of('RQ_ERR_ATTACH_REFUSED', `Attachment currently cannot be a directory ${source}`);
  try {
    await fsp.access(source, FS.R_OK);
  } catch {
    throw RqError.of('RQ_ERR_ATTACH_REFUSED', `Attachment currently cannot be read: ${source}`);
  }
  if (!st.isFile()) throw RqError.of('RQ_ERR_ATTACH_REFUSED', `Attachment currently not of supported type: ${source}`);
  const stored = name ?? path.basename(source);
  const problem = attachmentNameProblem(stored);
  if (problem) throw RqError.of('RQ_ERR_ATTACH_REFUSED', problem);
  return { stored, file: await fsp.realpath(source) };
}

/** The temp name of an attachment being stored: a dot name, so never a valid attachment name. */
export function attachTempName(name: string): string {
  return `.${name}.tmp`;
}

export function isAttachTemp(entry: string): boolean {
  return entry.startsWith('.') && entry.endsWith('.tmp');
}

/**
 * Attaches `source` to the message directory `msgDir` as `attach/<name>`: hard link to a temp
 * name, fsync of the linked inode (the source's bytes may still be only in the page cache), md5
 * of it, rename over the final name, fsync of attach/ (and of `msgDir` when attach/ is new).
 * Where a hard link is impossible (EXDEV across filesystems, EPERM under protected_hardlinks)
 * the classic daemon refused; rq copies the bytes (md5 computed while copying) and fsyncs the copy.
 */
export async function attachFile(
  msgDir: string,
  source: string,
  name: string | undefined,
  dirSync: DirSync,
  fs: SpoolFs = dirSync.fs,
): Promise<{ name: string; md5: string; size: number }> {
  const { stored, file } = await checkSource(source, name);
  const attachDir = path.join(msgDir, 'attach');
  await mkdirDurable(attachDir, dirSync, fs);
  const final = path.join(attachDir, stored);
  const tmp = path.join(attachDir, attachTempName(stored));
  await fs.rm(tmp, { force: true });
  try {
    let sum: { md5: string; size: number } | undefined;
    try {
      await fs.link(file, tmp);
    } catch (err) {
      if (!isErrno(err, 'EXDEV') && !isErrno(err, 'EPERM')) throw err;
      sum = await copyWithMd5(file, tmp, fs);
    }
    sum ??= await fsyncAndMd5(tmp, fs);
    await fs.rename(tmp, final);
    // rename(2) does nothing when both names are links to one inode (the same source attached
    // again under the same name), which would leave the temp name behind.
    await fs.rm(tmp, { force: true });
    // Kept so that no view of the message reads the file again; one directory sync covers both names.
    await writeSum(attachDir, stored, sum.md5, await fsp.lstat(final, { bigint: true }), fs);
    await dirSync.sync(attachDir);
    return { name: stored, ...sum };
  } catch (err) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
}

async function fsyncAndMd5(file: string, fs: SpoolFs): Promise<{ md5: string; size: number }> {
  await fsyncPath(file, fs);
  return md5File(file);
}

async function copyWithMd5(source: string, dest: string, fs: SpoolFs): Promise<{ md5: string; size: number }> {
  const out = await fs.open(dest, 'wx', 0o644);
  let sum: { md5: string; size: number };
  try {
    sum = await md5File(source, (chunk) => writeAll(out, chunk));
    await out.sync();
  } catch (err) {
    await out.close();
    await fs.rm(dest, { force: true });
    throw err;
  }
  await out.close();
  return sum;
}

/** Attachment names of a message (no dot entries, which include the temp names and the kept sums). */
export async function attachmentNames(msgDir: string): Promise<string[]> {
  try {
    return (await fsp.readdir(path.join(msgDir, 'attach'))).filter((n) => !n.startsWith('.')).sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

/** attach/ of a message, reached without following a link; null when there is none (or a script put something else there). */
async function attachDirOf(msgDir: string): Promise<SafeDir | null> {
  try {
    return await SafeDir.open(msgDir, ['attach']);
  } catch (err) {
    if (isNotPlainDir(err)) return null;
    throw err;
  }
}

/**
 * get_message's `_attachments`. A script may have left anything in attach/: only regular files get
 * a size and an md5 (the one kept when rq stored the file, else one computed once by `lazy`, within
 * its bound, else null); links, FIFOs, sockets, devices and directories are listed as what they are
 * and never opened.
 */
export async function listAttachments(msgDir: string, lazy: LazySums): Promise<Record<string, AttachmentInfo>> {
  const out: Record<string, AttachmentInfo> = {};
  const dir = await attachDirOf(msgDir);
  if (!dir) return out;
  try {
    const entries = (await dir.list()).filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = path.join(msgDir, 'attach', e.name);
      let st: BigIntStats;
      try {
        st = await dir.lstat(e.name);
      } catch {
        continue;
      }
      const kind = kindOf(st);
      if (kind !== 'file') {
        out[e.name] = { md5: null, size: null, path: p, type: kind };
        continue;
      }
      const md5 = (await keptSum(dir, e.name, st)) ?? (await lazy.of(dir, e.name, st));
      out[e.name] = { md5, size: Number(st.size), path: p };
    }
  } finally {
    await dir.close();
  }
  return out;
}

/** Deletes one attachment and its kept sum; returns the classic failure text, or null on success. */
export async function deleteAttachment(msgDir: string, name: string, dirSync: DirSync, fs: SpoolFs = dirSync.fs): Promise<string | null> {
  if (attachmentNameProblem(name) !== null) return 'No attachment with that named for msg';
  const dir = await attachDirOf(msgDir);
  if (!dir) return 'No attach directory for msg';
  try {
    try {
      await fs.unlink(dir.entry(name));
    } catch {
      return 'No attachment with that named for msg';
    }
    if (keepsSum(name)) await fs.rm(dir.entry(sumName(name)), { force: true });
  } finally {
    await dir.close();
  }
  await dirSync.sync(path.join(msgDir, 'attach'));
  return null;
}

/**
 * Hard-links every attachment of one message dir into another (clone, dup): no bytes copied.
 * Only regular files go, with their kept sums: what else a script left in attach/ stays behind.
 */
export async function linkAttachments(fromDir: string, toDir: string, dirSync: DirSync = new DirSync(), fs: SpoolFs = dirSync.fs): Promise<void> {
  const from = await attachDirOf(fromDir);
  if (!from) return;
  try {
    const names = (await from.list()).filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name);
    if (names.length === 0) return;
    const target = path.join(toDir, 'attach');
    await mkdirDurable(target, dirSync, fs);
    for (const n of names) {
      await fs.link(from.entry(n), path.join(target, n));
      await fs.link(from.entry(sumName(n)), path.join(target, sumName(n))).catch(() => undefined);
    }
    await dirSync.sync(target);
  } finally {
    await from.close();
  }
}
