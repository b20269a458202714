// Ends what a finished script left running, in its process group or its run cgroup: TERM at once, KILL once the queue's kill grace has passed.
import fs from 'node:fs';
import type { Logger } from 'pino';
import { killAll, members, removeCgroup, whenEmpty } from './cgroup-fs.js';

const TERM_LOGGED = 'the script exited and left processes in its group: sent them TERM';
const KILL_LOGGED = 'processes the script left outlived the kill grace: sent them KILL';
/** How long a run cgroup may take to empty after its KILL (a process in uninterruptible sleep) before it is left for the queue's next start. */
export const REMOVE_MS = 30_000;

/**
 * Called once the script has exited and been reaped. One kill(2) on the group: when nothing is
 * left (the usual case) it fails with ESRCH and that is all it costs, no /proc scan per run.
 * A daemon that left the group with setsid(2) is out of reach here: endCgroupLeftovers reaches it.
 */
export function endLeftovers(pgid: number, log: Logger, graceMs: number): void {
  if (pgid <= 1) return;
  if (!signal(-pgid, 'SIGTERM')) return;
  log.warn({ pgid }, TERM_LOGGED);
  const timer = setTimeout(() => {
    // The leader (the script, pid = pgid) is gone for good: a live process with its pid is a reuse
    // that may lead a new group of the same number, and is left alone.
    if (fs.existsSync(`/proc/${pgid}`)) return;
    if (signal(-pgid, 'SIGKILL')) log.warn({ pgid, grace_ms: graceMs }, KILL_LOGGED);
  }, graceMs);
  timer.unref();
}

/**
 * endLeftovers for a script started in its own cgroup (run-cgroups.ts): every process in it gets
 * TERM, whatever session it made for itself; what is still there after the grace is killed with
 * cgroup.kill, which nothing escapes and no pid reuse can misdirect; then the cgroup is removed.
 * When nothing is left (one read of cgroup.procs) `keep` may take the cgroup for another run instead.
 * Rejects only when the cgroup cannot be removed.
 */
export async function endCgroupLeftovers(dir: string, pgid: number, log: Logger, graceMs: number, keep: () => boolean = () => false): Promise<void> {
  const pids = signalMembers(dir, 'SIGTERM');
  if (pids.length > 0) {
    log.warn({ pgid, cgroup: dir, pids }, TERM_LOGGED);
    if (!(await whenEmpty(dir, graceMs))) {
      killAll(dir);
      log.warn({ pgid, cgroup: dir, grace_ms: graceMs }, KILL_LOGGED);
    }
  } else if (keep()) return;
  await removeCgroup(dir, REMOVE_MS);
}

/**
 * Sends `sig` to each process in the cgroup and returns their pids. Not the process group as
 * well: its members are in the cgroup too, and a script trapping TERM would run its trap twice.
 */
export function signalMembers(dir: string, sig: NodeJS.Signals): number[] {
  const pids = members(dir);
  for (const pid of pids) signal(pid, sig);
  return pids;
}

/** True when there was a process (or group, for a negative pid) to signal. */
function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}
