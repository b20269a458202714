// cgroup v2 through its files: where this process's cgroup is, and a cgroup's members, kill, emptiness and removal.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError } from '../../errors.js';

export type CgroupHome = { ok: true; dir: string } | { ok: false; why: string };

/** mountinfo writes space, tab, newline and backslash in paths as octal escapes. */
export function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The directory of this process's cgroup v2, from the texts of /proc/self/mountinfo and
 * /proc/self/cgroup, or why there is none. The mount is found, not assumed: /sys/fs/cgroup on a
 * unified host, /sys/fs/cgroup/unified on a hybrid one, and inside a container its root may be a
 * path of the host's hierarchy.
 */
export function cgroupHome(mountinfo: string, procCgroup: string): CgroupHome {
  const own = /^0::(\/.*)$/m.exec(procCgroup)?.[1];
  if (own === undefined) return { ok: false, why: 'this process is in no cgroup v2 hierarchy (cgroup v1 only)' };
  for (const line of mountinfo.split('\n')) {
    const [fields, fsFields] = line.split(' - ');
    if (fsFields?.split(' ')[0] !== 'cgroup2') continue;
    const [, , , rootField, pointField, options] = fields.split(' ');
    const under = underMountRoot(unescapeMount(rootField), own);
    if (under === null) continue;
    const point = unescapeMount(pointField);
    if (options.split(',').includes('ro')) return { ok: false, why: `cgroup2 is mounted read-only at ${point}` };
    return { ok: true, dir: path.resolve(point, `.${under}`) };
  }
  return { ok: false, why: "no cgroup2 mount shows this process's cgroup" };
}

/** A /proc file's text, '' when it cannot be read. */
export function procText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Where cgroup path `own` lies under a mount whose root is `root` (a container's mount may start deeper), or null when outside it. */
export function underMountRoot(root: string, own: string): string | null {
  return root === '/' ? own : own === root ? '/' : own.startsWith(`${root}/`) ? own.slice(root.length) : null;
}

/** cgroupHome of this process, from /proc. */
export function ownCgroupHome(): CgroupHome {
  return cgroupHome(procText('/proc/self/mountinfo'), procText('/proc/self/cgroup'));
}

/** Whether a process lives in the cgroup at `dir` or below it; a cgroup already removed has none. */
export function populated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(fs.readFileSync(path.join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return false;
  }
}

/** The processes in the cgroup at `dir` itself (not its children); none once it is removed. */
export function members(dir: string): number[] {
  try {
    return fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * SIGKILLs every process in the cgroup and below it, whatever session or group it made, in one
 * write (cgroup.kill, Linux 5.14): a process forking meanwhile cannot slip out. A cgroup already
 * removed is not an error.
 */
export function killAll(dir: string): void {
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Resolves true once the cgroup has no process (cgroup.events `populated 0`, watched through
 * inotify: the kernel marks the file modified when it changes), false if it still has one after `ms`.
 */
export function whenEmpty(dir: string, ms: number): Promise<boolean> {
  if (!populated(dir)) return Promise.resolve(true);
  return new Promise((resolve) => {
    let watcher: fs.FSWatcher | null = null;
    let settled = false;
    const done = (empty: boolean) => {
      if (settled) return;
      settled = true;
      watcher?.close();
      clearTimeout(timer);
      resolve(empty);
    };
    const timer = setTimeout(() => done(!populated(dir)), ms);
    try {
      watcher = fs.watch(path.join(dir, 'cgroup.events'), () => !populated(dir) && done(true));
      watcher.on('error', () => done(!populated(dir)));
    } catch {
      // Removed already: nothing lives in it.
      return done(true);
    }
    // Checked once the watch is in place, so a change just before it is not missed.
    if (!populated(dir)) done(true);
  });
}

/** A task counted out of cgroup.events can still be on its way out of the cgroup: rmdir is retried on EBUSY this many times, 1, 4, 16… ms apart. */
const RMDIR_TRIES = 7;

/**
 * Removes the cgroup at `dir` and any child cgroups a script made in it, once no process is left
 * in them (waiting up to `ms` for that). Rejects with why it could not.
 */
export async function removeCgroup(dir: string, ms: number): Promise<void> {
  if (!(await whenEmpty(dir, ms))) throw RqError.of('RQ_ERR_CGROUP_BUSY', dir, ms);
  await removeTree(dir);
}

/** rmdir of `dir` and the cgroups in it, retried while the kernel says busy (a task on its way out); rejects past RMDIR_TRIES. */
export async function removeTree(dir: string): Promise<void> {
  for (let tries = 1, waitMs = 1; ; tries++, waitMs *= 4) {
    try {
      return await fsp.rmdir(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || tries >= RMDIR_TRIES) throw err;
    }
    // Busy: cgroups made inside it (removed first), or a task still on its way out (waited for).
    const inner = (await fsp.readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory());
    for (const e of inner) await removeTree(path.join(dir, e.name));
    if (inner.length === 0) await new Promise((r) => setTimeout(r, waitMs));
  }
}
