// Whether rq may divide its cgroup v2 (its manager delegated it), and rq-mgr's move into a leaf of it, so that cgroup may give its controllers to the queues' cgroups (the kernel gives them only from a cgroup no process is in).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { members, ownCgroupHome } from './cgroup-fs.js';
import { addonPath } from './addon-path.js';

/** The cgroup rq-mgr moves into, inside its own: the web, the timers and the queue processes it starts live there too. */
export const DAEMONS_LEAF = 'rq-daemons';

/** The cgroup v2 controllers rq limits runs with. */
export const V2_CONTROLLERS = ['memory', 'pids', 'cpu', 'io'] as const;
export type V2Controller = (typeof V2_CONTROLLERS)[number];

/** Where the queues' cgroups go for a process in cgroup `dir`: beside the daemons' leaf when it is in it, else inside its own. */
export function queuesHome(dir: string): string {
  return path.basename(dir) === DAEMONS_LEAF ? path.dirname(dir) : dir;
}

let getxattr: ((file: string, name: string) => string | null) | null | undefined;

/** An extended attribute of `file` (the native addon: Node has no getxattr), null when absent or when the addon is not built. */
function xattr(file: string, name: string): string | null {
  if (getxattr === undefined) {
    try {
      getxattr = (createRequire(import.meta.url)(addonPath('rq_xattr')) as { getxattr: typeof getxattr }).getxattr;
    } catch {
      getxattr = null;
    }
  }
  return getxattr ? getxattr(file, name) : null;
}

/**
 * Whether the cgroup at `dir` was given to this process's user to divide: systemd marks a cgroup
 * it delegates (`Delegate=yes`) with `trusted.delegate` (`user.delegate` from a user's manager,
 * systemd 251 and later); for a user other than root, a delegation also makes the cgroup's
 * `cgroup.subtree_control` that user's. Neither: the cgroup is its manager's, and rq moves nobody
 * into it and gives none of its controllers away.
 */
export function delegatedToUs(dir: string): boolean {
  if (!fs.existsSync(path.join(dir, 'cgroup.type'))) return false; // the root: the host's, never delegated
  if (xattr(dir, 'trusted.delegate') === '1' || xattr(dir, 'user.delegate') === '1') return true;
  const uid = process.geteuid?.() ?? 0;
  try {
    return uid !== 0 && fs.statSync(path.join(dir, 'cgroup.subtree_control')).uid === uid;
  } catch {
    return false;
  }
}

/**
 * Moves this process into `<its cgroup>/rq-daemons` when its cgroup was delegated to it
 * (delegatedToUs), is offered any of `wanted` (the controllers rq limits runs with), and this
 * process is alone in it: systemd's `Delegate=yes` gives a unit such a cgroup, with the unit's main
 * process in it. Another process there (a shell, a supervisor, a container's init) is not rq's to
 * move, and nothing is done: the queues then say that the controllers cannot be given below it.
 * Returns the leaf it moved into, or null.
 */
export function leaveForLeaf(wanted: readonly string[] = V2_CONTROLLERS): string | null {
  const home = ownCgroupHome();
  if (!home.ok || path.basename(home.dir) === DAEMONS_LEAF) return null;
  let offered: string[];
  try {
    offered = fs.readFileSync(path.join(home.dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
  } catch {
    return null;
  }
  if (!wanted.some((c) => offered.includes(c)) || !delegatedToUs(home.dir)) return null;
  const pids = members(home.dir);
  if (pids.length !== 1 || pids[0] !== process.pid) return null;
  const leaf = path.join(home.dir, DAEMONS_LEAF);
  fs.mkdirSync(leaf, { recursive: true });
  fs.writeFileSync(path.join(leaf, 'cgroup.procs'), String(process.pid));
  return leaf;
}
