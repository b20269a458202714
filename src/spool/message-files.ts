// The files inside one message directory besides attachments: msg, status, pid, the resend, cancel and shutdown marks, job/ and rq's temp files.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError, isErrno } from '../errors.js';
import { type Message, storable } from '../message/message.js';
import { isAttachTemp } from './attachments.js';
import { SafeDir, readMessageFile } from './beneath.js';

/** status and cancel are one short JSON object each. */
const SMALL_FILE_MAX_BYTES = 1024 * 1024;
import { type DirSync, overwriteFile, writeFileDurable } from './durable.js';
import { APPEND, TRUNCATE, openOwn, openOwnSync, ownDirSync } from './own-files.js';
import type { SpoolFs } from './spool-fs.js';

export interface JobStatus {
  job_status: string | null;
}

export async function readMessage(dir: string, id: string): Promise<Message> {
  const msg = JSON.parse(await readMessageFile(dir, 'msg')) as Message;
  if (typeof msg !== 'object' || msg === null || typeof msg.msg_id !== 'string') throw RqError.of('RQ_ERR_NOT_A_MESSAGE', id);
  return msg;
}

export async function writeMessage(dir: string, msg: Message, dirSync: DirSync): Promise<void> {
  await writeFileDurable(path.join(dir, 'msg'), JSON.stringify(storable(msg)), dirSync);
}

/** The status file's text; null when there is none or a crash tore it. */
export async function readStatus(dir: string): Promise<JobStatus | null> {
  try {
    const parsed = JSON.parse(await readMessageFile(dir, 'status', SMALL_FILE_MAX_BYTES)) as JobStatus;
    return { job_status: typeof parsed?.job_status === 'string' ? parsed.job_status : null };
  } catch {
    return null;
  }
}

/**
 * Status texts change on every pipe line: overwritten in place (no new inode per line), and
 * fsynced only when asked (final texts). A write refused for space fails and leaves the old text
 * (durable.ts overwriteFile); a torn status after a crash reads as null; the message's state is its
 * directory, never this file.
 */
export async function writeStatus(dir: string, text: string | null, sfs: SpoolFs, dirSync?: DirSync): Promise<void> {
  await overwriteFile(path.join(dir, 'status'), JSON.stringify({ job_status: text }), dirSync, sfs);
}

/** job/ (the script's cwd); synchronous, on the dispatch path. */
export function makeJobDir(dir: string, sfs: SpoolFs): string {
  const job = path.join(dir, 'job');
  ownDirSync(sfs, job);
  return job;
}

/** The running script's pid, for a later queue process to find a script its predecessor left. */
export function writePid(dir: string, pid: number, sfs: SpoolFs): void {
  const fd = openOwnSync(sfs, path.join(dir, 'pid'), TRUNCATE);
  try {
    sfs.writeFileSync(fd, String(pid));
  } finally {
    sfs.closeSync(fd);
  }
}

/**
 * Removes the pid file at the end of every run: one unlink (rm would lstat it twice first, three
 * trips to the thread pool); only a directory a script made in its place takes the long way.
 */
export async function removePid(dir: string, sfs: SpoolFs): Promise<void> {
  const file = path.join(dir, 'pid');
  try {
    await sfs.unlink(file);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return;
    if (!isErrno(err, 'EISDIR') && !isErrno(err, 'EPERM')) throw err;
    await sfs.rm(file, { recursive: true, force: true });
  }
}

/** `cancel`: a running message's cancel `{at, by, reason}`, durable before the kill (rq-beyond §B5). */
export async function writeCancelMarker(dir: string, record: object, dirSync: DirSync): Promise<void> {
  await writeFileDurable(path.join(dir, 'cancel'), JSON.stringify(record), dirSync);
}

/** The cancel marker of a message in run/, or null when it has none (recovery finishes such a message to err). */
export async function readCancelMarker(dir: string): Promise<Record<string, unknown> | null> {
  try {
    const v = JSON.parse(await readMessageFile(dir, 'cancel', SMALL_FILE_MAX_BYTES));
    return typeof v === 'object' && v !== null ? v : {};
  } catch (err) {
    // A marker torn by a crash still says "cancel": only a missing file means no cancel.
    return isErrno(err, 'ENOENT') ? null : {};
  }
}

/** An empty `shutdown` file: a graceful stop interrupted this run, so recovery does not count it as a crash (rq-beyond §B13). */
export async function markShutdown(dir: string, sfs: SpoolFs): Promise<void> {
  await (await openOwn(sfs, path.join(dir, 'shutdown'), TRUNCATE)).close();
}

/** An empty `resend` file: the script asked for a resend (spec §3.4). */
export async function markResend(dir: string, sfs: SpoolFs): Promise<void> {
  await (await openOwn(sfs, path.join(dir, 'resend'), TRUNCATE)).close();
}

/**
 * Creates what a run needs (job/, job/stdio.log, history, an empty pid) ahead of the dispatch, so
 * that the start creates no inode on its path: on a busy ext4 a new inode costs the queue up to
 * milliseconds. Best effort and idempotent (a staged blank already has some): the message may move
 * meanwhile (then its paths are gone and nothing more is made), and the start makes what is missing.
 * An empty pid names no process (stale-scripts.ts reads it as none).
 */
export async function stageRun(dir: string, sfs: SpoolFs): Promise<void> {
  if (sfs.stageRun) return sfs.stageRun(dir).catch(() => undefined);
  try {
    await sfs.mkdir(path.join(dir, 'job')).catch((err: unknown) => {
      if (!isErrno(err, 'EEXIST')) throw err;
    });
    for (const file of [path.join('job', 'stdio.log'), 'history', 'pid']) await (await openOwn(sfs, path.join(dir, file), APPEND)).close();
  } catch {
    // Moved or deleted meanwhile: the dispatcher copes.
  }
}

/**
 * Removes the temp files rq itself leaves at a crash: `msg.tmp`, `status.tmp`, `pid.tmp` in the
 * message dir and `.<name>.tmp` in attach/. `attach/x.tmp` is a legitimate attachment name and
 * job/ belongs to the script, so neither is touched.
 */
export async function cleanTemps(dir: string, sfs: SpoolFs): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (n.endsWith('.tmp')) await sfs.rm(path.join(dir, n), { force: true });
  // attach/ may be a link a script made: its temp names are removed only in attach/ itself.
  const attach = await SafeDir.open(dir, ['attach']).catch(() => null);
  if (!attach) return;
  try {
    for (const e of await attach.list()) if (isAttachTemp(e.name)) await sfs.rm(attach.entry(e.name), { force: true });
  } finally {
    await attach.close();
  }
}
