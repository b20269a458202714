// Hash directories (done/, relayed/): <state>/YYYYMMDD/HH/MM/<id>, counted and listed newest first.
import fs from 'node:fs/promises';
import path from 'node:path';
import { hashParts } from '../message/message-id.js';
import { type DirSync, mkdirDurable } from './durable.js';
import type { SpoolFs } from './spool-fs.js';
import { RqError, isErrno } from '../errors.js';

const DAY = /^\d{8}$/;
const TWO = /^\d{2}$/;
const ENTRY = /^\d{2}/;

export function hashPath(stateDir: string, id: string): string | null {
  const parts = hashParts(id);
  return parts ? path.join(stateDir, ...parts, id) : null;
}

async function names(dir: string, re: RegExp): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).filter((n) => re.test(n));
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return [];
    throw err;
  }
}

/** Minute directories, newest first. */
async function* minuteDirs(stateDir: string): AsyncGenerator<string> {
  for (const day of (await names(stateDir, DAY)).sort().reverse()) {
    const dayDir = path.join(stateDir, day);
    for (const hour of (await names(dayDir, TWO)).sort().reverse()) {
      const hourDir = path.join(dayDir, hour);
      for (const minute of (await names(hourDir, TWO)).sort().reverse()) yield path.join(hourDir, minute);
    }
  }
}

export async function hashCount(stateDir: string): Promise<number> {
  let n = 0;
  for await (const dir of minuteDirs(stateDir)) n += (await names(dir, ENTRY)).length;
  return n;
}

/** Ids newest first (each level sorted descending), at most `limit`. */
export async function hashList(stateDir: string, limit = Infinity): Promise<string[]> {
  const out: string[] = [];
  if (limit <= 0) return out;
  for await (const dir of minuteDirs(stateDir)) {
    for (const id of (await names(dir, ENTRY)).sort().reverse()) {
      out.push(id);
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/**
 * Creates the hash directory for an id durably. Remembers the minute directories it made so a
 * burst into the same minute costs one stat-free lookup; the set is small (one entry a minute).
 * Concurrent callers for one minute share one creation: a second caller must not see the
 * directory exist and move a message into it before the first has fsynced the new levels.
 */
export class HashDirMaker {
  private readonly known = new Map<string, Promise<void>>();
  constructor(
    private readonly dirSync: DirSync,
    private readonly fs: SpoolFs = dirSync.fs,
  ) {}

  async ensure(stateDir: string, id: string): Promise<string> {
    const target = hashPath(stateDir, id);
    if (!target) throw RqError.of('RQ_ERR_INVALID_MSG_ID', `message id ${id} has no hash-dir shape`);
    const minuteDir = path.dirname(target);
    let made = this.known.get(minuteDir);
    if (!made) {
      made = mkdirDurable(minuteDir, this.dirSync, this.fs);
      this.known.set(minuteDir, made);
      made.catch(() => {
        if (this.known.get(minuteDir) === made) this.known.delete(minuteDir);
      });
    }
    await made;
    return target;
  }

  forget(minuteDir: string): void {
    this.known.delete(minuteDir);
  }
}
