// Messages of chosen ages written straight into a root's hash dirs, err/ and trash, for the cleaner tests.
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { hashPath } from '../../src/spool/hash-dir.js';
import { idStamp } from '../../src/message/message-id.js';

let inode = 900_000;

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/** An id created `ageMs` before `now` (UTC, like real ids). */
export function idAged(now: number, ageMs: number): string {
  return `${idStamp(now - ageMs)}.${inode++}`;
}

async function writeMessage(dir: string, queue: string, id: string): Promise<void> {
  await fs.mkdir(path.join(dir, 'job'), { recursive: true });
  await fs.writeFile(
    path.join(dir, 'msg'),
    JSON.stringify({ msg_id: id.replace(/^\./, ''), dest: queue, count: 0, max_count: 15, due: 0, orig_msg_id: `http://x/q/${queue}/${id}` }),
  );
  await fs.writeFile(path.join(dir, 'status'), JSON.stringify({ job_status: 'old' }));
}

/** done/ or relayed/ message of the given age; returns its id. */
export async function hashed(root: string, queue: string, state: 'done' | 'relayed', now: number, ageMs: number): Promise<string> {
  const id = idAged(now, ageMs);
  await writeMessage(hashPath(queuePaths(root, queue).state[state], id)!, queue, id);
  return id;
}

/** err/ message; acknowledged ones are stored as `.<id>`. Returns the name in err/. */
export async function errored(root: string, queue: string, now: number, ageMs: number, acked: boolean): Promise<string> {
  const name = `${acked ? '.' : ''}${idAged(now, ageMs)}`;
  await writeMessage(path.join(queuePaths(root, queue).state.err, name), queue, name);
  return name;
}

/** prep/ draft never committed, made `ageMs` ago; returns its id. */
export async function drafted(root: string, queue: string, now: number, ageMs: number): Promise<string> {
  const id = idAged(now, ageMs);
  await writeMessage(path.join(queuePaths(root, queue).state.prep, id), queue, id);
  return id;
}

/** A deleted queue in queues/.trash, deleted `ageMs` ago. */
export async function trashed(root: string, queue: string, now: number, ageMs: number): Promise<string> {
  const name = `${queue}.${idStamp(now - ageMs)}`;
  await fs.mkdir(path.join(rootPaths(root).trash, name, 'done'), { recursive: true });
  return name;
}
