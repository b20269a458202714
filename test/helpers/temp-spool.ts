// Test harness for the spool: a temp root with one queue's state dirs, and directory probes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { RqError } from '../../src/errors.js';
import { QueueSpool, type SpoolDeps } from '../../src/spool/queue-spool.js';

export const HOST = { host: '127.0.0.1', port: 3333, root: '/' };

export interface TempSpool {
  root: string;
  spool: QueueSpool;
  cleanup(): Promise<void>;
}

/** A fresh temp root (fs.mkdtemp under os.tmpdir()) with queue `name` and its six state dirs. */
export async function tempSpool(name = 'test', deps: Partial<SpoolDeps> = {}): Promise<TempSpool> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-spool-'));
  const spool = new QueueSpool(root, name, { host: HOST, ...deps });
  await spool.ensureDirs();
  return { root, spool, cleanup: () => fs.rm(root, { recursive: true, force: true }) };
}

/** Entries of a directory, sorted; [] when it does not exist. */
export async function ls(dir: string): Promise<string[]> {
  return (await fs.readdir(dir).catch(() => [] as string[])).sort();
}

/** Every path under `dir` (files and dirs, relative), depth first. */
export async function walk(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const p = path.join(rel, e.name);
    out.push(p);
    if (e.isDirectory()) out.push(...(await walk(dir, p)));
  }
  return out;
}

/** True when running as root, where permission bits do not stop writes. */
export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** A fresh temp spool for each test, on a clock the test sets (`s.clock = …`), starting at `start`; `root` is its temp root. */
export function perTestSpool(name: string, start: number): { clock: number; readonly spool: QueueSpool; readonly root: string } {
  let t: TempSpool | null = null;
  const s = {
    clock: start,
    get spool(): QueueSpool {
      return t!.spool;
    },
    get root(): string {
      return t!.root;
    },
  };
  beforeEach(async () => {
    s.clock = start;
    t = await tempSpool(name, { now: () => s.clock });
  });
  afterEach(() => t?.cleanup());
  return s;
}

/** The error `p` rejects with; throws when it fulfils. */
export async function caught(p: Promise<unknown>): Promise<RqError> {
  try {
    await p;
  } catch (err) {
    return err as RqError;
  }
  throw new Error('expected a rejection');
}
