// A pool message's binding to its host, kept in its job dir: job/relay_host (written before the prep) and job/relay_commit (written before a commit is sent).
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isObject, isString } from '../ipc/answer.js';
import { isErrno } from '../errors.js';
import { DirSync, writeFileDurable } from '../spool/durable.js';
import { RELAY_ID_FILE } from './relay-id.js';

export const RELAY_HOST_FILE = 'relay_host';
export const RELAY_COMMIT_FILE = 'relay_commit';

export interface PoolBinding {
  host: string;
  url: string;
}

async function readText(file: string): Promise<string | null> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/** The host chosen by an earlier attempt, or null (none yet, or a file that is not one rq wrote: chosen again). */
export async function readBinding(jobDir: string): Promise<PoolBinding | null> {
  const text = await readText(path.join(jobDir, RELAY_HOST_FILE));
  try {
    const v: unknown = text === null ? null : JSON.parse(text);
    return isObject(v) && isString(v.host) && isString(v.url) ? { host: v.host, url: v.url } : null;
  } catch {
    return null;
  }
}

/** Durable before the prep is sent: whatever far copy the prep makes is then known to be on this host. */
export async function writeBinding(jobDir: string, b: PoolBinding): Promise<void> {
  await writeFileDurable(path.join(jobDir, RELAY_HOST_FILE), JSON.stringify({ host: b.host, url: b.url }), new DirSync());
}

/** Durable before a commit is sent: from then on only the bound host can say whether the message landed there. */
export async function markCommitSent(jobDir: string): Promise<void> {
  await writeFileDurable(path.join(jobDir, RELAY_COMMIT_FILE), `${new Date().toISOString()}\n`, new DirSync());
}

export async function commitSent(jobDir: string): Promise<boolean> {
  return (await readText(path.join(jobDir, RELAY_COMMIT_FILE))) !== null;
}

/** The bound host no longer takes the message and no commit went to it: its prep copy (if any) is left there unrun, and a new host is chosen. */
export async function forgetBinding(jobDir: string): Promise<void> {
  for (const f of [RELAY_COMMIT_FILE, RELAY_ID_FILE, RELAY_HOST_FILE]) await fsp.rm(path.join(jobDir, f), { force: true });
}
