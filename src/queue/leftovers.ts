// Ends what a finished script left running in its process group: TERM at once, KILL once the queue's kill grace has passed.
import fs from 'node:fs';
import type { Logger } from 'pino';

/**
 * Called once the script has exited and been reaped. One kill(2) on the group: when nothing is
 * left (the usual case) it fails with ESRCH and that is all it costs, no /proc scan per run.
 * A daemon that left the group with setsid(2) is out of reach here.
 */
export function endLeftovers(pgid: number, log: Logger, graceMs: number): void {
  if (pgid <= 1) return;
  if (!signal(pgid, 'SIGTERM')) return;
  log.warn({ pgid }, 'the script exited and left processes in its group: sent them TERM');
  const timer = setTimeout(() => {
    // The leader (the script, pid = pgid) is gone for good: a live process with its pid is a reuse
    // that may lead a new group of the same number, and is left alone.
    if (fs.existsSync(`/proc/${pgid}`)) return;
    if (signal(pgid, 'SIGKILL')) log.warn({ pgid, grace_ms: graceMs }, 'processes the script left outlived the kill grace: sent them KILL');
  }, graceMs);
  timer.unref();
}

/** True when the group had a member to signal. */
function signal(pgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}
