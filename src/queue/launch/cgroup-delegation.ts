// Whether rq may divide a cgroup v2, and which of its controllers it may use: only what the cgroup's manager delegated to it (systemd's mark, or a user's own hand-over), never the root, never a cgroup systemd still manages.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { addonPath } from './addon-path.js';
import { readCgroupFile } from './cgroup-files.js';

/** The cgroup v2 controllers rq limits runs with. */
export const V2_CONTROLLERS = ['memory', 'pids', 'cpu', 'io'] as const;
export type V2Controller = (typeof V2_CONTROLLERS)[number];

let getxattr: ((file: string, name: string) => string | null) | null | undefined;
/** Why the getxattr addon did not load, once it was tried. */
let addonProblem: string | null = null;

/** An extended attribute of `file` (the native addon: Node has no getxattr), null when absent, unreadable, or the addon is not built. */
function xattr(file: string, name: string): string | null {
  if (getxattr === undefined) {
    try {
      getxattr = (createRequire(import.meta.url)(addonPath('rq_xattr')) as { getxattr: typeof getxattr }).getxattr;
    } catch (err) {
      getxattr = null;
      addonProblem = `the rq_xattr addon did not load (${(err as Error).message.split('\n')[0]}), so systemd's delegation mark cannot be read`;
    }
  }
  return getxattr ? getxattr(file, name) : null;
}

function ownerOf(file: string): number | null {
  try {
    return fs.statSync(file).uid;
  } catch {
    return null;
  }
}

/**
 * Whether the cgroup at `dir` was delegated to this process's user, and how it shows (null when
 * not). systemd (251 and later) marks the cgroup of a unit with `Delegate=yes` with both
 * `trusted.delegate` and `user.delegate`; only root reads `trusted.*`, and cgroupfs has `user.*`
 * from Linux 5.7. A user other than root also takes the hand-over itself as the mark: a delegation
 * chows the cgroup's `cgroup.subtree_control` to the user, and its parent's stays its manager's
 * (below it, every cgroup the user made is the user's, delegated or not).
 */
export function delegationMark(dir: string): string | null {
  if (!fs.existsSync(path.join(dir, 'cgroup.type'))) return null; // the root: the host's, never delegated
  for (const name of ['trusted.delegate', 'user.delegate']) if (xattr(dir, name) === '1') return name;
  const uid = process.geteuid?.() ?? 0;
  const control = (d: string) => ownerOf(path.join(d, 'cgroup.subtree_control'));
  if (uid !== 0 && control(dir) === uid && control(path.dirname(dir)) !== uid) return 'handed over to this user';
  return null;
}

/** Why `dir` is not rq's to divide: for the reason a queue gives. */
export function notDelegated(dir: string): string {
  return `${dir} is not delegated to rq (systemd: Delegate=yes), and rq gives away no controller of a cgroup it was not given${addonProblem ? `; ${addonProblem}` : ''}`;
}

/**
 * Why `home` has no controller `c` to give: the root of a cgroup2 mount lacks only what the kernel
 * keeps on a cgroup v1 hierarchy (or was built without), which no delegation changes; a cgroup
 * below it was not given it by its parent.
 */
function notOffered(home: string, c: string): string {
  if (!fs.existsSync(path.join(home, 'cgroup.type')))
    return `cgroup v2 has no ${c} controller at ${home}: the kernel keeps it on a cgroup v1 hierarchy, or has none`;
  return `no cgroup v2 ${c} controller is delegated to ${home}`;
}

/** The controllers a cgroup's `cgroup.controllers` (offered to it) or `cgroup.subtree_control` (given below it) names. */
export function controllersIn(dir: string, file: 'cgroup.controllers' | 'cgroup.subtree_control'): Set<string> {
  return new Set((readCgroupFile(dir, file) ?? '').split(/\s+/).filter(Boolean));
}

/** The controllers among `controllers` rq may give below `home` (already given there, or offered to a cgroup delegated to it), and why each other one is not; reads only. */
export function availableBelow<C extends string>(home: string, controllers: readonly C[]): { usable: C[]; given: Set<string>; missing: Map<C, string> } {
  const offered = controllersIn(home, 'cgroup.controllers');
  const given = controllersIn(home, 'cgroup.subtree_control');
  const ours = delegationMark(home) !== null;
  const usable: C[] = [];
  const missing = new Map<C, string>();
  for (const c of controllers) {
    if (given.has(c) || (offered.has(c) && ours)) usable.push(c);
    else missing.set(c, offered.has(c) ? notDelegated(home) : notOffered(home, c));
  }
  return { usable, given, missing };
}
