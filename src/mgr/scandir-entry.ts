// What one scandir/ entry is: a link to a queue directory with a usable run, or the reason it cannot become a queue.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type QueueNameRoom, queueNameFitProblem } from '../config/socket-paths.js';
import { queueNameProblem } from '../message/names.js';

export type ScandirEntry =
  /** A queue to have: the link's real target and its run. */
  | { kind: 'queue'; name: string; target: string; run: string }
  /** What the operator has to change for this entry to become a queue. */
  | { kind: 'refused'; name: string; reason: string }
  /** Not meant as a queue (a dot-file such as .gitkeep), or gone while being looked at. */
  | { kind: 'ignored'; name: string };

const errText = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

/**
 * Looks at scandir/<name> (`dir` is scandir/). Never throws: every way an entry falls short is a
 * reason, so the caller can tell the operator once instead of skipping it without a word.
 */
export async function inspectEntry(dir: string, name: string, room: QueueNameRoom): Promise<ScandirEntry> {
  const link = path.join(dir, name);
  const st = await fsp.lstat(link).catch(() => null);
  if (!st) return { kind: 'ignored', name };
  if (!st.isSymbolicLink()) {
    // Hidden files are the root's own (.gitkeep keeps the folder in git), never meant as queues.
    if (name.startsWith('.')) return { kind: 'ignored', name };
    return { kind: 'refused', name, reason: `scandir/${name} is not a symbolic link (link a directory holding an executable run)` };
  }
  const refused = (reason: string): ScandirEntry => ({ kind: 'refused', name, reason });
  const nameProblem = queueNameProblem(name) ?? queueNameFitProblem(room, name);
  if (nameProblem) return refused(nameProblem);
  let target: string;
  try {
    target = await fsp.realpath(link);
  } catch (err) {
    const to = await fsp.readlink(link).catch(() => '?');
    return refused(`dangling link: scandir/${name} points to ${to}, which cannot be reached (${errText(err)})`);
  }
  const tst = await fsp.stat(target).catch(() => null);
  if (!tst?.isDirectory()) return refused(`scandir/${name} links to ${target}, which is not a directory`);
  const run = path.join(target, 'run');
  const rst = await fsp.stat(run).catch((err: unknown) => errText(err));
  if (typeof rst === 'string') return refused(`no usable run in ${target} (${rst})`);
  if (!rst.isFile()) return refused(`${run} is not a file`);
  try {
    await fsp.access(run, fs.constants.X_OK);
  } catch {
    return refused(`${run} is not executable (chmod +x it)`);
  }
  return { kind: 'queue', name, target, run };
}
