// Fills the filesystem holding `file` to its last free page: the full disk of the chaos and ENOSPC tests.
import fs from 'node:fs';

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
