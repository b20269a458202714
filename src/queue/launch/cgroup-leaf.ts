// rq-mgr's move into a leaf of the cgroup v2 delegated to it, so that cgroup may give its controllers to the queues' cgroups (the kernel gives them only from a cgroup no process is in).
import fs from 'node:fs';
import path from 'node:path';
import { members, ownCgroupHome } from './cgroup-fs.js';
import { V2_CONTROLLERS, delegationMark } from './cgroup-delegation.js';

/** The cgroup rq-mgr moves into, inside its own: the web, the timers and the queue processes it starts live there too. */
export const DAEMONS_LEAF = 'rq-daemons';

/** Where the queues' cgroups go for a process in cgroup `dir`: beside the daemons' leaf when it is in it, else inside its own. */
export function queuesHome(dir: string): string {
  return path.basename(dir) === DAEMONS_LEAF ? path.dirname(dir) : dir;
}

/**
 * Moves this process into `<its cgroup>/rq-daemons` when its cgroup was delegated to it
 * (delegationMark), is offered any of `wanted` (the controllers rq limits runs with), and this
 * process is alone in it: systemd's `Delegate=yes` gives a unit such a cgroup, with the unit's main
 * process in it. Another process there (a shell, a supervisor, a container's init) is not rq's to
 * move, and nothing is done: the queues then say that the controllers cannot be given below it.
 * Returns the leaf it moved into and the delegation's mark, or null.
 */
export function leaveForLeaf(wanted: readonly string[] = V2_CONTROLLERS): { leaf: string; mark: string } | null {
  const home = ownCgroupHome();
  if (!home.ok || path.basename(home.dir) === DAEMONS_LEAF) return null;
  let offered: string[];
  try {
    offered = fs.readFileSync(path.join(home.dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
  } catch {
    return null;
  }
  const mark = wanted.some((c) => offered.includes(c)) ? delegationMark(home.dir) : null;
  if (mark === null) return null;
  const pids = members(home.dir);
  if (pids.length !== 1 || pids[0] !== process.pid) return null;
  const leaf = path.join(home.dir, DAEMONS_LEAF);
  fs.mkdirSync(leaf, { recursive: true });
  fs.writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
  return { leaf, mark };
}
