// A queue's run limits on cgroup v2 controllers, where the host delegates them: the queue's parent cgroup gives them to its run cgroups, each run's limits are written into its own cgroup and what it used is read from there.
import fs from 'node:fs';
import path from 'node:path';
import { type RunLimits, RUN_LIMIT_FIELDS } from '../../message/run-limits.js';
import { keyedNumbers, numberFile, readCgroupFile, writeCgroupFile } from './cgroup-files.js';
import { oomStatus } from './oom-status.js';
import type { RunUsage } from './run-usage.js';
import { type V2Controller, V2_CONTROLLERS, availableBelow, controllersIn } from './cgroup-delegation.js';

const NEEDS: Record<keyof RunLimits, V2Controller> = { memory_max: 'memory', memory_high: 'memory', cpu_max: 'cpu', pids_max: 'pids', io_weight: 'io' };

/** cpu.max's period: the kernel's default, 100 ms. */
const CPU_PERIOD_US = 100_000;

/**
 * Gives each of `controllers` (those rq uses) that rq may use below `home` (availableBelow: given
 * there already, or offered to a cgroup delegated to rq) to its child `parent`, and from there to
 * the run cgroups below it. The kernel lets `home` give a controller only while no process is in
 * it (rq-mgr moves itself out for this, leaveForLeaf). Returns why each controller that cannot be
 * used is not.
 */
export function delegate<C extends string>(home: string, parent: string, controllers: readonly C[]): { enabled: Set<C>; missing: Map<C, string> } {
  const { usable, given: atHome, missing } = availableBelow(home, controllers);
  const enabled = new Set<C>();
  for (const c of usable) {
    try {
      if (!atHome.has(c)) writeCgroupFile(home, 'cgroup.subtree_control', `+${c}`);
      if (!controllersIn(parent, 'cgroup.subtree_control').has(c)) writeCgroupFile(parent, 'cgroup.subtree_control', `+${c}`);
      enabled.add(c);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      missing.set(
        c,
        code === 'EBUSY'
          ? `${home} has processes of its own, so the kernel lets it give the ${c} controller to no cgroup below it (run rq-mgr alone in a delegated cgroup)`
          : `cannot enable the cgroup v2 ${c} controller below ${home}: ${code ?? (err as Error).message}`,
      );
    }
  }
  return { enabled, missing };
}

/**
 * Once cpu is a controller between the queue's cgroups and the daemons', nice no longer weighs
 * across them: the queue's cgroups get nice 19's weight, as its scripts have, so rq's daemons come
 * first within rq's cgroup, as before (across the host, rq's cgroup weighs as its manager set it).
 */
function weighLikeNice19(dir: string): void {
  try {
    if (fs.existsSync(path.join(dir, 'cpu.weight.nice'))) writeCgroupFile(dir, 'cpu.weight.nice', 19);
  } catch {
    // A weight is no limit: left as it is, the queue's scripts only weigh more than they did.
  }
}

/** The queue's run limits through cgroup v2: which controllers its limited runs' cgroups have, and each such run's limit files. */
export class V2Limits {
  private constructor(
    private readonly enabled: Set<V2Controller>,
    private readonly missing: Map<V2Controller, string>,
    private readonly scheduler: string | null,
  ) {}

  /**
   * The controllers `limitsParent` (the cgroup of the queue's runs with limits, in `home`) gives
   * its run cgroups; `plainParent` (that of its other runs, beside it) gets none. Without a
   * `limitsParent` (none was made: `why`), only the reasons.
   */
  static open(home: string, plainParent: string, limitsParent: string | null, scheduler: string | null, why?: string): V2Limits {
    if (limitsParent) {
      const { enabled, missing } = delegate(home, limitsParent, V2_CONTROLLERS);
      for (const dir of [plainParent, limitsParent]) weighLikeNice19(dir);
      return new V2Limits(enabled, missing, scheduler);
    }
    // None was made: what could have been used is named with why it was not.
    const { usable, missing } = availableBelow(home, V2_CONTROLLERS);
    for (const c of usable) missing.set(c, why ?? "no cgroup for the queue's runs with limits");
    weighLikeNice19(plainParent);
    return new V2Limits(new Set(), missing, scheduler);
  }

  /** Whether any controller is there for runs. */
  get usable(): boolean {
    return this.enabled.size > 0;
  }

  /** Why limit `f` cannot be enforced through cgroup v2 here, null when it can. */
  why(f: keyof RunLimits): string | null {
    const c = NEEDS[f];
    if (!this.enabled.has(c)) return this.missing.get(c) ?? `no cgroup v2 ${c} controller`;
    if (f === 'io_weight' && this.scheduler !== 'bfq')
      return `the queue's disk is scheduled by ${this.scheduler ?? 'an unknown scheduler'}, and only bfq weighs IO`;
    return null;
  }

  /** Whether any limit of `limits` is enforced here (the run's limits go into its cgroup). */
  takes(limits: RunLimits): boolean {
    return RUN_LIMIT_FIELDS.some((f) => limits[f] !== undefined && this.why(f) === null);
  }

  /** Writes the limits of `limits` this host enforces into the run cgroup `dir`, before any process is in it; throws what refused. */
  apply(dir: string, l: RunLimits): void {
    if (l.memory_max !== undefined && this.why('memory_max') === null) {
      writeCgroupFile(dir, 'memory.max', l.memory_max);
      // v1's limit counts memory and swap together; v2's swap has a limit of its own: none, so the run cannot swap its way past memory_max.
      if (fs.existsSync(path.join(dir, 'memory.swap.max'))) writeCgroupFile(dir, 'memory.swap.max', 0);
    }
    if (l.memory_high !== undefined && this.why('memory_high') === null) writeCgroupFile(dir, 'memory.high', l.memory_high);
    if (l.cpu_max !== undefined && this.why('cpu_max') === null)
      writeCgroupFile(dir, 'cpu.max', `${Math.max(1000, Math.round(l.cpu_max * CPU_PERIOD_US))} ${CPU_PERIOD_US}`);
    if (l.pids_max !== undefined && this.why('pids_max') === null) writeCgroupFile(dir, 'pids.max', l.pids_max);
    if (l.io_weight !== undefined && this.why('io_weight') === null) writeCgroupFile(dir, 'io.bfq.weight', Math.min(1000, l.io_weight));
  }
}

/** Usage from a run cgroup v2's files: each controller's that it has (cpu.stat's times every cgroup has). */
export function readV2Usage(dir: string, limits: RunLimits): { usage: Partial<RunUsage>; oom: string | null } {
  const usage: Partial<RunUsage> = {};
  const cpu = keyedNumbers(readCgroupFile(dir, 'cpu.stat'));
  const user = cpu.get('user_usec');
  const system = cpu.get('system_usec');
  if (user !== undefined && system !== undefined) Object.assign(usage, { cpu_user_ms: Math.round(user / 1000), cpu_system_ms: Math.round(system / 1000) });
  const throttled = cpu.get('throttled_usec');
  if (throttled !== undefined && limits.cpu_max !== undefined) usage.throttled_ms = Math.round(throttled / 1000);
  const peak = numberFile(dir, 'memory.peak');
  if (peak !== undefined) usage.memory_peak_bytes = peak;
  const pidsPeak = numberFile(dir, 'pids.peak');
  if (pidsPeak !== undefined) usage.pids_peak = pidsPeak;
  const refused = keyedNumbers(readCgroupFile(dir, 'pids.events')).get('max');
  if (refused) usage.pids_refused = refused;
  const io = ioBytes(readCgroupFile(dir, 'io.stat'));
  if (io) Object.assign(usage, { io_read_bytes: io.read, io_write_bytes: io.write });
  const events = keyedNumbers(readCgroupFile(dir, 'memory.events'));
  const high = events.get('high');
  if (high && limits.memory_high !== undefined) usage.memory_high_holds = high;
  const oomKills = events.get('oom_kill') ?? 0;
  if (oomKills > 0) usage.oom_kills = oomKills;
  // `oom` counts the times the run's own limit left an allocation to fail (`max` also counts reaching it when reclaim made room; a global OOM counts in neither).
  return { usage, oom: oomKills > 0 ? oomStatus(limits, peak, (events.get('oom') ?? 0) > 0) : null };
}

/** Bytes read and written from io.stat's `<major>:<minor> rbytes=N wbytes=N …` lines, summed over devices; undefined without a device line. */
export function ioBytes(text: string | null): { read: number; write: number } | undefined {
  let read = 0;
  let write = 0;
  let seen = false;
  for (const line of (text ?? '').split('\n')) {
    const [dev, ...pairs] = line.split(' ');
    if (!/^\d+:\d+$/.test(dev ?? '')) continue;
    seen = true;
    for (const pair of pairs) {
      const [k, v] = pair.split('=');
      if (k === 'rbytes') read += Number(v);
      else if (k === 'wbytes') write += Number(v);
    }
  }
  return seen ? { read, write } : undefined;
}
