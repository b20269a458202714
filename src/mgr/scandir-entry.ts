// What one scandir/ entry is: a link to a queue directory with a usable run, or the reason it cannot become a queue.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type QueueNameRoom, queueNameFitProblem } from '../config/socket-paths.js';
import { MAX_QUEUE_NAME, queueNameProblem } from '../message/names.js';

export type ScandirEntry =
  /** A queue to have: the link's real target and its run. */
  | { kind: 'queue'; name: string; target: string; run: string }
  /** Why this entry cannot become a queue, and what the operator can change for it to become one. */
  | { kind: 'refused'; name: string; reason: string; fix: string }
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
    return {
      kind: 'refused',
      name,
      reason: `scandir/${name} is not a symbolic link`,
      fix: `move it out of scandir/ and link it instead: ln -s /path/to/${name} scandir/${name}`,
    };
  }
  const refused = (reason: string, fix: string): ScandirEntry => ({ kind: 'refused', name, reason, fix });
  const badName = queueNameProblem(name);
  // The bound this root allows: a long root leaves its sockets' paths less room than the name rule's.
  if (badName)
    return refused(badName, `link the directory under a name of letters, digits, - and _, at most ${Math.min(MAX_QUEUE_NAME, room.maxBytes)} characters`);
  const unfit = queueNameFitProblem(room, name);
  if (unfit) return refused(unfit, `link the directory under a name of at most ${room.maxBytes} bytes, or move the root to a shorter path`);
  let target: string;
  try {
    target = await fsp.realpath(link);
  } catch (err) {
    const to = await fsp.readlink(link).catch(() => '?');
    return refused(
      `dangling link: scandir/${name} points to ${to}, which cannot be reached (${errText(err)})`,
      `point scandir/${name} at a directory holding an executable run (ln -sfn DIR scandir/${name}), or remove it`,
    );
  }
  const tst = await fsp.stat(target).catch(() => null);
  if (!tst?.isDirectory())
    return refused(
      `scandir/${name} links to ${target}, which is not a directory`,
      `link a directory holding an executable run instead (ln -sfn DIR scandir/${name})`,
    );
  const run = path.join(target, 'run');
  const rst = await fsp.stat(run).catch((err: unknown) => errText(err));
  if (typeof rst === 'string') return refused(`no usable run in ${target} (${rst})`, `put an executable run in ${target}`);
  if (!rst.isFile()) return refused(`${run} is not a file`, `make ${run} an executable file`);
  try {
    await fsp.access(run, fs.constants.X_OK);
  } catch {
    return refused(`scandir/${name}/run is not executable`, `chmod +x ${run}`);
  }
  return { kind: 'queue', name, target, run };
}
