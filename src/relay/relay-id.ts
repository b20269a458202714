// job/relay_id: the far host's id of the copy being relayed, stored durably before anything is sent after it.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../errors.js';
import { DirSync, writeFileDurable } from '../spool/durable.js';

export const RELAY_ID_FILE = 'relay_id';

/** The stored far full id, or null when there is none (first attempt, or a fresh copy was needed). */
export async function readRelayId(jobDir: string): Promise<string | null> {
  try {
    const text = (await fsp.readFile(path.join(jobDir, RELAY_ID_FILE), 'utf8')).trim();
    return text === '' ? null : text;
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/**
 * tmp + fsync + rename + fsync of job/: once this returns, a crash or retry finds the id and
 * re-uses the far copy instead of allocating a second one.
 */
export async function writeRelayId(jobDir: string, fullId: string): Promise<void> {
  await writeFileDurable(path.join(jobDir, RELAY_ID_FILE), fullId, new DirSync());
}

export async function removeRelayId(jobDir: string): Promise<void> {
  await fsp.rm(path.join(jobDir, RELAY_ID_FILE), { force: true });
}
