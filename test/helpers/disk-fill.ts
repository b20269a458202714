// Small full disks for the ENOSPC tests: a tmpfs mounted on a directory (root only), and filled to its last free page.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Mounts a tmpfs of `size` (`3m`, `256k`) on `dir` and returns its unmount. Root mounts it (CI runs
 * as root here); anywhere else the mount's own error says why the test cannot run.
 */
export async function mountTmpfs(dir: string, size: string, name: string, mode = '0755'): Promise<() => Promise<void>> {
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=${mode}`, name, dir]);
  return async () => void (await run('umount', ['-l', dir]));
}

/** Writes `file` until the disk refuses, in 1 MiB chunks and then page by page, so no free page is left. */
export function fillDisk(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1 << 20, 4096]) {
      const chunk = Buffer.alloc(size);
      for (;;) {
        try {
          fs.writeSync(fd, chunk);
        } catch {
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}
