// What this test process holds open: the paths its descriptors name, to show a code path left none behind.
import fs from 'node:fs';

/** The paths this process's open descriptors name that lie under `dir` (a descriptor closing meanwhile is skipped). */
export function openFilesUnder(dir: string): string[] {
  return fs.readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      const p = fs.readlinkSync(`/proc/self/fd/${fd}`);
      return p.startsWith(dir) ? [p] : [];
    } catch {
      return [];
    }
  });
}
