// Script process groups seen from /proc, for tests that check a kill reached a whole group (zombies waiting under a container's init do not count).
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
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

/** The pid in `file`, or undefined while the file is missing or half-written (a shell's `echo $$ >` truncates first). */
async function readPid(file: string): Promise<number | undefined> {
  const pid = Number((await fs.readFile(file, 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 1 ? pid : undefined;
}

/** The pid a fixture script wrote to `file`, once it is there. */
export function pidInFile(file: string): Promise<number> {
  return waitFor(() => readPid(file), `pid in ${file}`);
}

/**
 * The pid a rerun of a fixture script wrote to `file` over an older one. Never 0: an empty file read
 * mid-write once gave 0, and signalling -0 ends the test runner's own process group.
 */
export function newPidInFile(file: string, old: number, label: string, timeoutMs = 10_000): Promise<number> {
  return waitFor(
    async () => {
      const pid = await readPid(file);
      return pid !== old ? pid : undefined;
    },
    label,
    timeoutMs,
  );
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

/** Ends a child this test started, if it still runs (SIGTERM), and waits for its exit. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
}
