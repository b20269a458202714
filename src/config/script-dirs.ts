// A root's script_dirs, where a queue made over HTTP takes its script: their real paths, whether a file lies inside one, and the marker that holds a queue to them at every start.
import fs from 'node:fs';
import path from 'node:path';
import { shown } from '../errors.js';
import type { GlobalConfig } from './global-config.js';

/**
 * In a queue's directory: the queue was made over HTTP (`/new_queue`, `/new_queue_link`), so its
 * script, kept as given, must resolve inside script_dirs at every start, not only at its creation.
 */
export const SCRIPT_DIRS_MARKER = '.script_dirs_only';

const realOrNull = (p: string): string | null => {
  try {
    return fs.realpathSync(p);
  } catch {
    return null;
  }
};

const inside = (file: string, dir: string) => file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** What the refusals say script_dirs are: the list, or that the config has none. */
export function scriptDirsWanted(config: GlobalConfig): string {
  const listed = config.script_dirs ?? [];
  return listed.length ? `a file inside script_dirs (${listed.join(', ')})` : 'a file inside script_dirs, and config/config.json lists none';
}

/**
 * Whether the real path `file` lies inside one of the config's script_dirs (relative entries
 * are relative to the root, symlinks resolved), and not where clients write (queues/, tmpdir),
 * whatever the config lists. Synchronous: a queue asks it before each start, a few realpaths.
 */
export function insideScriptDirs(root: string, config: GlobalConfig, file: string): boolean {
  const dirs = (config.script_dirs ?? []).map((d) => realOrNull(path.resolve(root, d))).filter((d): d is string => d !== null);
  const written = [path.join(root, 'queues'), config.tmpdir ?? path.join(root, 'tmp')].map(realOrNull).filter((d): d is string => d !== null);
  return dirs.some((d) => inside(file, d)) && !written.some((d) => inside(file, d));
}

/** A queue held to script_dirs whose script (configured as `given`) now resolves to `real` outside them: the SCRIPTERROR reason; else null. */
export function scriptOutsideProblem(root: string, config: GlobalConfig, given: string, real: string): string | null {
  if (insideScriptDirs(root, config, real)) return null;
  return `script ${shown(given)} resolves to ${real}, outside script_dirs: a queue made over HTTP runs only ${scriptDirsWanted(config)}`;
}
