// What a process holds open: the paths its descriptors name, to show a code path left none behind.
import fs from 'node:fs';

/** The paths the open descriptors of `pid` (this test process by default) name that lie under `dir`; one closing meanwhile is skipped. */
export function openFilesUnder(dir: string, pid: number | 'self' = 'self'): string[] {
  return fs.readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      const p = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      return p.startsWith(dir) ? [p] : [];
    } catch {
      return [];
    }
  });
}
