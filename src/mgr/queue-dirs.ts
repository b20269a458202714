// Queue directories as the supervisor sees them: discover, create, and move to the trash.
import { SCRIPT_DIRS_MARKER } from '../config/script-dirs.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths, rootPaths } from '../config/paths.js';
import { queueNameFitProblem, queueNameRoom } from '../config/socket-paths.js';
import { STATES } from '../message/states.js';
import { isValidQueueName } from '../message/names.js';
import { DirSync, mkdirDurable, writeFileDurable } from '../spool/durable.js';
import { idStamp } from '../message/message-id.js';

/** Marker inside a queue dir created from scandir/: only such queues are ever removed by scandir. */
export const SCANDIR_MARKER = '.scandir';

/**
 * Valid queue names under queues/ that have a readable config.json. A name whose socket paths do
 * not fit under this root (a queue made before names were checked, or a root moved to a longer
 * path) is left out and told to `unfit`: its process could not listen on its own socket.
 */
export async function discoverQueues(root: string, unfit?: (name: string, reason: string) => void): Promise<string[]> {
  const dir = rootPaths(root).queues;
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const room = queueNameRoom(root);
  const out: string[] = [];
  for (const n of names.sort()) {
    if (!isValidQueueName(n)) continue;
    const problem = queueNameFitProblem(room, n);
    if (problem) {
      unfit?.(n, problem);
      continue;
    }
    try {
      await fs.access(queuePaths(root, n).configFile, fs.constants.R_OK);
      out.push(n);
    } catch {
      // Not a queue (yet): no readable config.
    }
  }
  return out;
}

/**
 * Creates queues/<q>/ with its state dirs and config.json (or a symlink to `configLink`),
 * durably, so a queue process started right after finds everything.
 */
export interface CreateQueueOptions {
  configLink?: string;
  scandirTarget?: string;
  /** Made over HTTP: the queue process refuses a script that no longer resolves inside script_dirs (config/script-dirs.ts). */
  scriptDirsOnly?: boolean;
}

export async function createQueueDir(root: string, config: Record<string, unknown>, opts: CreateQueueOptions = {}): Promise<void> {
  const p = queuePaths(root, String(config.name));
  const sync = new DirSync();
  await mkdirDurable(p.dir, sync);
  for (const s of STATES) await mkdirDurable(p.state[s], sync);
  if (opts.configLink) {
    await fs.rm(p.configFile, { force: true });
    await fs.symlink(opts.configLink, p.configFile);
    await sync.sync(p.dir);
  } else {
    await writeFileDurable(p.configFile, JSON.stringify(config), sync);
  }
  if (opts.scandirTarget) await writeFileDurable(path.join(p.dir, SCANDIR_MARKER), opts.scandirTarget, sync);
  if (opts.scriptDirsOnly) await writeFileDurable(path.join(p.dir, SCRIPT_DIRS_MARKER), '', sync);
}

export async function isScandirQueue(root: string, name: string): Promise<boolean> {
  try {
    await fs.access(path.join(queuePaths(root, name).dir, SCANDIR_MARKER));
    return true;
  } catch {
    return false;
  }
}

/** A queue scandir made whose link is still in scandir/: scandir keeps it, so only removing the link deletes it. */
export async function keptByLink(root: string, name: string): Promise<boolean> {
  if (!(await isScandirQueue(root, name))) return false;
  return fs.lstat(path.join(rootPaths(root).scandir, name)).then(
    (st) => st.isSymbolicLink(),
    () => false,
  );
}

/**
 * Moves a queue dir, messages and all, to queues/.trash/<q>.<time>/; returns the new path. Its pause
 * and down files go too: a queue made again under the name starts as a new queue does, UP.
 */
export async function trashQueueDir(root: string, name: string): Promise<string> {
  const trash = rootPaths(root).trash;
  await fs.mkdir(trash, { recursive: true });
  const target = path.join(trash, `${name}.${idStamp(Date.now())}`);
  const p = queuePaths(root, name);
  // Before the move: once the directory is gone, a queue made again under the name must find neither.
  await Promise.all([p.pauseFile, p.downFile].map((f) => fs.rm(f, { force: true })));
  await fs.rename(p.dir, target);
  const sync = new DirSync();
  await Promise.all([sync.sync(trash), sync.sync(rootPaths(root).queues), sync.sync(rootPaths(root).config)]);
  return target;
}
