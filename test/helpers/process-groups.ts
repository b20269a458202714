// Script process groups seen from /proc, for tests that check a kill reached a whole group (zombies waiting under a container's init do not count).
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import { afterEach } from 'vitest';
import { waitFor } from './rq-root.js';

/** Live (not zombie) members of a process group. */
export async function groupMembers(pgid: number): Promise<number[]> {
  const out: number[] = [];
  for (const name of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) out.push(Number(name));
  }
  return out;
}

/** Whether `pid` is a live process (a zombie is not). */
export function alive(pid: number): boolean {
  try {
    const stat = fsSync.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pid a fixture script wrote to `file`, once it is there. */
export function pidInFile(file: string): Promise<number> {
  return waitFor(async () => Number((await fs.readFile(file, 'utf8').catch(() => '')).trim()) || undefined, `pid in ${file}`);
}

/** Groups a test saw, killed after it if a failure left them running; push pgids onto the returned list. */
export function killLeftoverGroups(): number[] {
  const groups: number[] = [];
  afterEach(async () => {
    for (const pgid of groups.splice(0)) {
      if ((await groupMembers(pgid)).length === 0) continue;
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  });
  return groups;
}
