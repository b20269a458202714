// The files and descriptors this test process holds open: what a test counts to show that code closed what it opened.
import fsSync from 'node:fs';
import fs from 'node:fs/promises';

/** The paths under `dir` (its real path: /proc names files that way) that this process holds open. */
export async function openUnder(dir: string): Promise<string[]> {
  const real = await fs.realpath(dir);
  const fds = await fs.readdir('/proc/self/fd');
  const targets = await Promise.all(fds.map((fd) => fs.readlink(`/proc/self/fd/${fd}`).catch(() => '')));
  return targets.filter((t) => t.startsWith(`${real}/`));
}

/** Whether `fd` is open in this process. */
export function isOpen(fd: number): boolean {
  try {
    fsSync.fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}
