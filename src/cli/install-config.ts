// What rq-install writes where a config/config.json is already: the existing settings kept, the options given on top.
import fs from 'node:fs/promises';
import { isErrno } from '../errors.js';

export interface ForcedConfig<T> {
  config: T;
  /** The existing keys no option changed, in the file's order. */
  kept: string[];
  /** The existing file is no JSON object: it is moved aside before the new one is written. */
  unreadable: boolean;
}

/**
 * `--force` over an existing config changes only what its options set: a port moved with
 * `--port N --force` (what rq-mgr says to do when the port is taken) keeps basic_auth, env and every
 * other key. Without a file, or with one that is no JSON object, `defaults` (which hold `given`) are written.
 */
export async function forcedConfig<T extends object>(file: string, defaults: T, given: Partial<T>): Promise<ForcedConfig<T>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { config: defaults, kept: [], unreadable: false };
    throw err;
  }
  let before: unknown;
  try {
    before = JSON.parse(text);
  } catch {
    before = null;
  }
  if (typeof before !== 'object' || before === null || Array.isArray(before)) return { config: defaults, kept: [], unreadable: true };
  return { config: { ...defaults, ...before, ...given }, kept: Object.keys(before).filter((k) => !(k in given)), unreadable: false };
}

/** Where an unreadable config is moved: beside it, named by the time, so that a second one moves no first one away. */
export function asideName(file: string, now: Date = new Date()): string {
  return `${file}.unreadable-${now.toISOString().replace(/[:.]/g, '-')}`;
}
