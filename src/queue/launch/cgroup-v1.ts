// cgroup v1 hierarchies, where a host keeps its controllers (memory, pids, cpu, cpuacct, blkio): where each is mounted for this process, and the files a run's limits and accounting use.
import path from 'node:path';
import { procText, underMountRoot, unescapeMount } from './cgroup-fs.js';

export const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'cpuacct', 'blkio'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

/** For each controller a v1 hierarchy holds: the directory of this process's cgroup there (writable mounts only), or why not. */
export type V1Homes = Partial<Record<V1Controller, { dir: string } | { why: string }>>;

/**
 * Where this process's cgroups of the v1 controllers are, from the texts of /proc/self/mountinfo
 * and /proc/self/cgroup. A hierarchy may hold several controllers (`cpu,cpuacct` on many hosts):
 * they share a directory.
 */
export function v1Homes(mountinfo: string, procCgroup: string): V1Homes {
  const own = new Map<string, string>();
  for (const line of procCgroup.split('\n')) {
    const m = /^\d+:([^:]+):(\/.*)$/.exec(line);
    if (m) for (const c of m[1].split(',')) own.set(c, m[2]);
  }
  const out: V1Homes = {};
  for (const line of mountinfo.split('\n')) {
    const [fields, fsFields] = line.split(' - ');
    const [type, , superOptions] = fsFields?.split(' ') ?? [];
    if (type !== 'cgroup') continue;
    const [, , , rootField, pointField, options] = fields.split(' ');
    const controllers = superOptions.split(',').filter((c): c is V1Controller => (V1_CONTROLLERS as readonly string[]).includes(c));
    for (const c of controllers) {
      const mine = own.get(c);
      if (mine === undefined || out[c] !== undefined) continue;
      const under = underMountRoot(unescapeMount(rootField), mine);
      if (under === null) continue;
      const point = unescapeMount(pointField);
      out[c] = options.split(',').includes('ro') ? { why: `the ${c} hierarchy is mounted read-only at ${point}` } : { dir: path.resolve(point, `.${under}`) };
    }
  }
  return out;
}

/** v1Homes of this process, from /proc. */
export function ownV1Homes(): V1Homes {
  return v1Homes(procText('/proc/self/mountinfo'), procText('/proc/self/cgroup'));
}

/** Bytes read and written from blkio's `<major>:<minor> Read|Write <bytes>` lines, summed over devices; undefined when it has no device line (no IO it could see). */
export function blkioBytes(text: string | null): { read: number; write: number } | undefined {
  let read = 0;
  let write = 0;
  let seen = false;
  for (const line of (text ?? '').split('\n')) {
    const [dev, op, n] = line.split(' ');
    if (!/^\d+:\d+$/.test(dev ?? '')) continue;
    seen = true;
    if (op === 'Read') read += Number(n);
    else if (op === 'Write') write += Number(n);
  }
  return seen ? { read, write } : undefined;
}
