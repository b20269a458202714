// Where a queue created over HTTP may take its script and config from: inside the config's script_dirs, symlinks resolved.
import fs from 'node:fs/promises';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { GlobalConfig } from '../config/global-config.js';

async function real(p: string): Promise<string | null> {
  return fs.realpath(p).catch(() => null);
}

const inside = (file: string, dir: string) => file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** The real paths of script_dirs that exist (relative entries are relative to the root). */
async function realScriptDirs(root: string, config: GlobalConfig): Promise<string[]> {
  const dirs = await Promise.all((config.script_dirs ?? []).map((d) => real(path.resolve(root, d))));
  return dirs.filter((d): d is string => d !== null);
}

/**
 * The real path of `given` (relative to the root), when it is a file inside one of the script
 * dirs; otherwise the 403 that names `field`. A link out of a script dir is judged by its target.
 */
export async function requireInScriptDirs(root: string, config: GlobalConfig, field: string, given: unknown): Promise<string> {
  const listed = config.script_dirs ?? [];
  const where = listed.length ? `a file inside script_dirs (${listed.join(', ')})` : 'a file inside script_dirs, and config/config.json lists none';
  // An empty path resolves to the root, a directory: refused below like any path that is no script.
  if (typeof given !== 'string' || given.includes('\0')) throw RqError.of('RQ_ERR_FORBIDDEN', field, where, shown(given));
  const file = await real(path.resolve(root, given));
  const stat = file ? await fs.stat(file).catch(() => null) : null;
  const dirs = await realScriptDirs(root, config);
  // Where clients write (attachments, uploads) is never a script dir, whatever the config lists.
  const written = (await Promise.all([path.join(root, 'queues'), config.tmpdir ?? path.join(root, 'tmp')].map(real))).filter((d): d is string => d !== null);
  if (!file || !stat?.isFile() || !dirs.some((d) => inside(file, d)) || written.some((d) => inside(file, d))) {
    throw RqError.of('RQ_ERR_FORBIDDEN', field, where, shown(given));
  }
  return file;
}
