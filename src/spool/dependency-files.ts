// The files of dependencies (rq-beyond §B8): a message's `dependents` and `resolved` (JSON lines), and the queue's `.outbox/<id>.json`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isErrno, isRqError } from '../errors.js';
import { readMessageFile, readMessageFileSync } from './beneath.js';
import { APPEND, openOwn } from './own-files.js';
import { nodeSpoolFs } from './spool-fs.js';
import { type DirSync, writeFileDurable } from './durable.js';

export interface ResolvedLine {
  ref: string;
  state: string;
  outcome?: string;
  at: string;
}

/** What a finished dependency still owes its dependents (§B8.4). */
export interface OutboxEntry {
  id: string;
  state: string;
  outcome?: string;
  dependents: string[];
  /** Dependents that have answered. */
  done: string[];
  /** The message was deleted after it had ended in `state`: its dependents learn that end, not a deletion. */
  deleted?: true;
}

function parseLines<T>(text: string): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A line cut by a crash mid-append was never acknowledged: its writer asks again.
    }
  }
  return out;
}

/** Appends one JSON line and fsyncs the file (its directory too when the file is new). */
async function appendDurable(file: string, line: object, dirSync: DirSync): Promise<void> {
  const fresh = !fs.existsSync(file);
  const h = await openOwn(nodeSpoolFs, file, APPEND, 0o640);
  try {
    await h.writeFile(`${JSON.stringify(line)}\n`);
    await h.datasync();
  } finally {
    await h.close();
  }
  if (fresh) await dirSync.sync(path.dirname(file));
}

/** JSON lines of a file in a message dir, read as a script may have left it (no link, no FIFO followed). */
async function readLines<T>(dir: string, name: string): Promise<T[]> {
  try {
    return parseLines<T>(await readMessageFile(dir, name));
  } catch (err) {
    // Missing, or something a script put in its place (a link, a FIFO): no lines rq wrote.
    if (isErrno(err, 'ENOENT') || isRqError(err, 'RQ_ERR_FILE_NOT_FOUND')) return [];
    throw err;
  }
}

/** Refs of the messages waiting on the message in `dir`, each once, in registration order. */
export async function readDependents(dir: string): Promise<string[]> {
  return [...new Set((await readLines<{ ref?: unknown }>(dir, 'dependents')).map((l) => l.ref).filter((r): r is string => typeof r === 'string'))];
}

/**
 * The same, read synchronously: it runs before every finish, where a message without dependents
 * (nearly all of them) costs one stat, not a thread-pool round trip.
 */
export function readDependentsNow(dir: string): string[] {
  const file = path.join(dir, 'dependents');
  // existsSync first: a failed read would build an Error with its stack for nearly every finish.
  if (!fs.existsSync(file)) return [];
  let text: string;
  try {
    text = readMessageFileSync(file);
  } catch {
    return [];
  }
  return [
    ...new Set(
      parseLines<{ ref?: unknown }>(text)
        .map((l) => l.ref)
        .filter((r): r is string => typeof r === 'string'),
    ),
  ];
}

export async function appendDependent(dir: string, ref: string, at: Date, dirSync: DirSync): Promise<void> {
  await appendDurable(path.join(dir, 'dependents'), { ref, at: at.toISOString() }, dirSync);
}

export async function readResolved(dir: string): Promise<ResolvedLine[]> {
  return readLines<ResolvedLine>(dir, 'resolved');
}

export async function appendResolved(dir: string, line: ResolvedLine, dirSync: DirSync): Promise<void> {
  await appendDurable(path.join(dir, 'resolved'), line, dirSync);
}

/** queues/<q>/.outbox/: one file per finished message whose dependents are not all told yet. */
export class Outbox {
  constructor(
    readonly dir: string,
    private readonly dirSync: DirSync,
  ) {}

  private file(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  /** Durable before the finishing rename (§B8.4). */
  async write(entry: OutboxEntry): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true, mode: 0o750 });
    await writeFileDurable(this.file(entry.id), JSON.stringify(entry), this.dirSync, undefined, 0o640);
  }

  async remove(id: string): Promise<void> {
    await fsp.rm(this.file(id), { force: true });
  }

  /** The entry of message `id`, or null (none, or a torn one). */
  async read(id: string): Promise<OutboxEntry | null> {
    try {
      return JSON.parse(await fsp.readFile(this.file(id), 'utf8')) as OutboxEntry;
    } catch {
      return null;
    }
  }

  /** Every entry; a torn one (a crash mid-write, before its rename) is dropped. */
  async list(): Promise<OutboxEntry[]> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    const out: OutboxEntry[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      try {
        out.push(JSON.parse(await fsp.readFile(path.join(this.dir, name), 'utf8')) as OutboxEntry);
      } catch {
        await fsp.rm(path.join(this.dir, name), { force: true });
      }
    }
    return out;
  }
}
