// Where a queue created over HTTP may take its script and config from: inside the config's script_dirs, symlinks resolved.
import fs from 'node:fs/promises';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import type { GlobalConfig } from '../config/global-config.js';
import { insideScriptDirs, scriptDirsWanted } from '../config/script-dirs.js';

/**
 * The real path of `given` (relative to the root), when it is a file inside one of the script
 * dirs; otherwise the 403 that names `field`. A link out of a script dir is judged by its target.
 */
export async function requireInScriptDirs(root: string, config: GlobalConfig, field: string, given: unknown): Promise<string> {
  const where = scriptDirsWanted(config);
  // An empty path resolves to the root, a directory: refused below like any path that is no script.
  if (typeof given !== 'string' || given.includes('\0')) throw RqError.of('RQ_ERR_FORBIDDEN', field, where, shown(given));
  const file = await fs.realpath(path.resolve(root, given)).catch(() => null);
  const stat = file ? await fs.stat(file).catch(() => null) : null;
  if (!file || !stat?.isFile() || !insideScriptDirs(root, config, file)) throw RqError.of('RQ_ERR_FORBIDDEN', field, where, shown(given));
  return file;
}
