// The files of one run's cgroup v1 directories: its limits written (or lifted), its counters reset, what it used read, and its processes ended.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { RunLimits } from '../../message/run-limits.js';
import { type V1Controller, blkioBytes } from './cgroup-v1.js';
import { keyedNumbers, numberFile, readCgroupFile, writeCgroupFile } from './cgroup-files.js';
import { oomStatus } from './oom-status.js';
import type { RunUsage } from './run-usage.js';
import { setCeiling, setHolding } from './memory-high.js';

/** What a reused set of cgroups remembers: whether an IO weight was set in it (the next run without one gets the default back), and whether its OOM killer is held for memory_high. */
export interface SlotState {
  weighted: boolean;
  holding: boolean;
}

/** Whether the run is held at memory_high (MemoryHigh): only where it is below memory_max, else memory_max alone acts. */
export function holdsAtHigh(l: RunLimits): boolean {
  return l.memory_high !== undefined && (l.memory_max === undefined || l.memory_high < l.memory_max);
}

/** The counters a run's figures are read against: those that cannot be reset. */
export interface Baseline {
  oomKills: number;
  failures: number;
  throttledNs: number;
}

const BFQ_WEIGHT = 'blkio.bfq.weight';

/**
 * BFQ's weight file of a blkio hierarchy, or null where BFQ (with its cgroup support) is not built
 * in. An io_weight is enforced only on a disk bfq schedules, and bfq reads only this file:
 * `blkio.weight` beside it is the old CFQ's (kernels before 5.0 that build both), which bfq ignores.
 */
export function weightFile(dir: string): string | null {
  return fs.existsSync(path.join(dir, BFQ_WEIGHT)) ? BFQ_WEIGHT : null;
}

/** io_weight (v2's scale: 1-10000, 100 the default share) on BFQ's v1 weight, which runs 1-1000 with the same default. */
function v1Weight(ioWeight: number): number {
  return Math.min(1000, ioWeight);
}

/** Writes every limit, set or lifted (-1: none), since reused cgroups carry the last run's. */
export function setLimits(dirs: Map<V1Controller, string>, l: RunLimits, slot: SlotState): void {
  const memory = dirs.get('memory');
  if (memory) {
    // With swap the run would swap past its limit: memsw is held to it too (setCeiling).
    const high = holdsAtHigh(l);
    setCeiling(memory, high ? l.memory_high! : (l.memory_max ?? -1));
    // MemoryHigh may have let the OOM killer act again at memory_max during the last run: written whenever either run holds.
    if (high || slot.holding) setHolding(memory, high);
    slot.holding = high;
  }
  const cpu = dirs.get('cpu');
  if (cpu) {
    const period = numberFile(cpu, 'cpu.cfs_period_us') ?? 100_000;
    writeCgroupFile(cpu, 'cpu.cfs_quota_us', l.cpu_max === undefined ? -1 : Math.max(1000, Math.round(l.cpu_max * period)));
  }
  const pids = dirs.get('pids');
  if (pids && l.pids_max !== undefined) writeCgroupFile(pids, 'pids.max', l.pids_max);
  const blkio = dirs.get('blkio');
  const weight = blkio ? weightFile(blkio) : null;
  if (blkio && weight && (l.io_weight !== undefined || slot.weighted)) writeCgroupFile(blkio, weight, v1Weight(l.io_weight ?? 100));
  slot.weighted = l.io_weight !== undefined;
}

/** Resets what can be reset (peak memory, CPU time, IO bytes) and reads the base of what cannot. */
export function resetCounters(dirs: Map<V1Controller, string>): Baseline {
  const memory = dirs.get('memory');
  if (memory) writeCgroupFile(memory, 'memory.max_usage_in_bytes', 0);
  const cpuacct = dirs.get('cpuacct');
  if (cpuacct) writeCgroupFile(cpuacct, 'cpuacct.usage', 0);
  const blkio = dirs.get('blkio');
  if (blkio && fs.existsSync(path.join(blkio, 'blkio.reset_stats'))) writeCgroupFile(blkio, 'blkio.reset_stats', 1);
  const cpu = dirs.get('cpu');
  return {
    oomKills: memory ? (keyedNumbers(readCgroupFile(memory, 'memory.oom_control')).get('oom_kill') ?? 0) : 0,
    failures: memory ? limitFailures(memory) : 0,
    throttledNs: cpu ? (keyedNumbers(readCgroupFile(cpu, 'cpu.stat')).get('throttled_time') ?? 0) : 0,
  };
}

/** What the run used so far, and the OOM status when the kernel's OOM killer ended a process of it. */
export function readUsage(dirs: Map<V1Controller, string>, limits: RunLimits, base: Baseline): { usage: Partial<RunUsage>; oom: string | null } {
  const usage: Partial<RunUsage> = {};
  const cpuacct = dirs.get('cpuacct');
  const total = cpuacct ? numberFile(cpuacct, 'cpuacct.usage') : undefined;
  const user = cpuacct ? numberFile(cpuacct, 'cpuacct.usage_user') : undefined;
  const system = cpuacct ? numberFile(cpuacct, 'cpuacct.usage_sys') : undefined;
  if (total !== undefined && user !== undefined && system !== undefined) {
    // cpuacct.usage is the scheduler's exact runtime; its user/system split is sampled at ticks, so it only shares the total out.
    const userMs = Math.round((total * (user + system > 0 ? user / (user + system) : 1)) / 1e6);
    Object.assign(usage, { cpu_user_ms: userMs, cpu_system_ms: Math.round(total / 1e6) - userMs });
  }
  const memory = dirs.get('memory');
  const peak = memory ? numberFile(memory, 'memory.max_usage_in_bytes') : undefined;
  if (peak !== undefined) usage.memory_peak_bytes = peak;
  const pids = dirs.get('pids');
  if (pids) {
    const pidsPeak = numberFile(pids, 'pids.peak');
    if (pidsPeak !== undefined) usage.pids_peak = pidsPeak;
    const refused = keyedNumbers(readCgroupFile(pids, 'pids.events')).get('max');
    if (refused) usage.pids_refused = refused;
  }
  // blkio counts only IO issued by the cgroup's own tasks to a device (not v1's writeback): without per-device lines, wait4's figures stand.
  const blkio = dirs.get('blkio');
  const io = blkio ? blkioBytes(readCgroupFile(blkio, 'blkio.throttle.io_service_bytes_recursive')) : undefined;
  if (io) Object.assign(usage, { io_read_bytes: io.read, io_write_bytes: io.write });
  const cpu = dirs.get('cpu');
  const throttled = cpu ? keyedNumbers(readCgroupFile(cpu, 'cpu.stat')).get('throttled_time') : undefined;
  if (throttled !== undefined) usage.throttled_ms = Math.round((throttled - base.throttledNs) / 1e6);
  const oomKills = memory ? (keyedNumbers(readCgroupFile(memory, 'memory.oom_control')).get('oom_kill') ?? 0) - base.oomKills : 0;
  if (oomKills > 0) usage.oom_kills = oomKills;
  // The run's own limit was hit when its charges were refused (failcnt; with memsw held to the same limit the kernel counts none) or its peak reached it.
  const hitLimit =
    (memory !== undefined && limitFailures(memory) > base.failures) || (limits.memory_max !== undefined && (peak ?? 0) >= limits.memory_max * 0.9);
  return { usage, oom: oomKills > 0 ? oomStatus(limits, peak, hitLimit) : null };
}

/** Charges the run's limit refused, of memory or of memory and swap together. */
function limitFailures(memory: string): number {
  return (numberFile(memory, 'memory.failcnt') ?? 0) + (numberFile(memory, 'memory.memsw.failcnt') ?? 0);
}

/** The processes in a cgroup directory (itself, not its children). */
function members(dir: string): number[] {
  return (readCgroupFile(dir, 'cgroup.procs') ?? '').split('\n').filter(Boolean).map(Number);
}

/** Whether no process is in any of `dirs`. */
export function allEmpty(dirs: Iterable<string>): boolean {
  for (const dir of dirs) if (members(dir).length > 0) return false;
  return true;
}

/**
 * SIGKILLs what is still in `dirs` (a run's leftovers past their grace, where no cgroup v2 ends
 * them, or a crashed queue process's) and removes the directories once they are empty.
 */
export async function endAndRemove(dirs: Iterable<string>): Promise<void> {
  for (const dir of dirs) {
    for (const pid of members(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
  }
  // A killed task leaves the cgroup once the kernel has reaped it: rmdir is retried on EBUSY meanwhile.
  for (const dir of dirs) await removeEmptied(dir);
}

async function removeEmptied(dir: string): Promise<void> {
  for (let wait = 1; ; wait *= 4) {
    try {
      return await fsp.rmdir(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || wait > 1024) throw err;
    }
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** What a finished run may leave charged to its memory cgroup for the next (the page cache of the files every run reads). */
const KEEP_CHARGED = 8 * 1024 * 1024;

/**
 * Gives back the pages a finished run left charged (the files it wrote, a tmpfs file it left) so the
 * next run's peak and limit are its own. Below KEEP_CHARGED nothing is done: force_empty drains every
 * CPU's page lists, which at every run had nearly halved a drain's rate.
 */
export async function releaseMemory(dir: string): Promise<boolean> {
  if ((numberFile(dir, 'memory.usage_in_bytes') ?? Infinity) < KEEP_CHARGED) return true;
  try {
    await fsp.writeFile(path.join(dir, 'memory.force_empty'), '0', { flag: 'r+' });
  } catch {
    return false;
  }
  // What cannot be reclaimed (a tmpfs file without swap) stays: such a cgroup is not used again.
  return (numberFile(dir, 'memory.usage_in_bytes') ?? Infinity) < KEEP_CHARGED;
}
