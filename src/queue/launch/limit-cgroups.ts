// A queue's run limits on the host's cgroup v1 hierarchies: which limits can be enforced here, each run's cgroups with its limits, what it used, and whether the kernel killed it for memory.
import fs from 'node:fs';
import path from 'node:path';
import { type RunLimits, RUN_LIMIT_FIELDS, formatSize } from '../../message/run-limits.js';
import { removeTree } from './cgroup-fs.js';
import { type V1Controller, type V1Homes, V1_CONTROLLERS, blkioBytes, keyedNumbers, numberFile, readCgroupFile } from './cgroup-v1.js';
import type { RunUsage } from './run-usage.js';

/** The controller each limit needs. */
const NEEDS: Record<keyof RunLimits, V1Controller | null> = { memory_max: 'memory', memory_high: null, cpu_max: 'cpu', pids_max: 'pids', io_weight: 'blkio' };

/** One run's cgroups: what its process joins, then what it used. */
export interface LimitRun {
  /** cgroup.procs files the script joins before its first instruction. */
  joins: string[];
  /** What the run used so far, and the OOM status when the kernel killed one of its processes for memory_max. */
  read(): { usage: Partial<RunUsage>; oom: string | null };
  /** Removes the run's cgroups once its processes are gone. */
  remove(): Promise<void>;
}

/** A run's reusable cgroups, and whether an IO weight was set in them (so the next run without one gets the default back). */
interface Slot {
  dirs: Map<V1Controller, string>;
  weighted: boolean;
}

/** The counters a run's figures are read against: those that cannot be reset. */
interface Baseline {
  oomKills: number;
  throttledNs: number;
}

/** The queue's parent cgroup in each hierarchy it can use, by controller (hierarchies holding several share one). */
export class LimitCgroups {
  private seq = 0;
  /** Cgroups of runs that are over, empty, ready for the next run. */
  private readonly free: Slot[] = [];
  private constructor(
    private readonly parents: Partial<Record<V1Controller, string>>,
    /** Why each controller is not usable here. */
    private readonly missing: Partial<Record<V1Controller, string>>,
  ) {}

  /** Makes (or takes over) `name` in each v1 hierarchy of `homes`; a hierarchy that refuses is noted, not fatal. */
  static open(name: string, homes: V1Homes): LimitCgroups {
    const parents: Partial<Record<V1Controller, string>> = {};
    const missing: Partial<Record<V1Controller, string>> = {};
    for (const c of V1_CONTROLLERS) {
      const home = homes[c];
      if (home === undefined) missing[c] = `no cgroup v1 ${c} hierarchy (and cgroup v2 has no ${c} controller delegated here)`;
      else if ('why' in home) missing[c] = home.why;
      else {
        const dir = path.join(home.dir, name);
        try {
          fs.mkdirSync(dir, { recursive: true });
          clearRuns(dir);
          parents[c] = dir;
        } catch (err) {
          missing[c] = `cannot make a cgroup in ${home.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
        }
      }
    }
    return new LimitCgroups(parents, missing);
  }

  /** Why each of `limits` that is set cannot be enforced here, one text per limit; empty when all can. */
  unenforceable(limits: RunLimits): string[] {
    const out: string[] = [];
    for (const f of RUN_LIMIT_FIELDS) {
      if (limits[f] === undefined) continue;
      const c = NEEDS[f];
      if (c === null) out.push(`${f}: cgroup v1 has no throttling memory limit (it needs cgroup v2's memory controller)`);
      else if (!this.parents[c]) out.push(`${f}: ${this.missing[c]}`);
      else if (f === 'io_weight' && weightFile(this.parents.blkio!) === null)
        out.push(`${f}: the blkio hierarchy has no weight (no proportional IO scheduler on this host)`);
    }
    return out;
  }

  /**
   * The run's cgroups with `limits` (those enforceable here) and the accounting ones, or throws what
   * refused. Those of a run that is over are used again (their counters reset, their limits
   * rewritten): making and removing a memory cgroup per run halved a drain's rate. The pids cgroup
   * is made per run, since pids.peak cannot be reset.
   */
  make(runName: string, limits: RunLimits): LimitRun {
    const slot = this.free.pop() ?? this.slot();
    let pids: string | null = null;
    try {
      if (this.parents.pids) {
        pids = path.join(this.parents.pids, `${runName}-${++this.seq}`);
        fs.mkdirSync(pids);
      }
      const dirs = new Map(slot.dirs);
      if (pids) dirs.set('pids', pids);
      const base = resetCounters(slot.dirs);
      setLimits(dirs, limits, slot);
      const joins = [...new Set(dirs.values())].map((dir) => path.join(dir, 'cgroup.procs'));
      return {
        joins,
        read: () => readUsage(dirs, limits, base),
        remove: async () => {
          if (pids) await removeTree(pids);
          if (isEmpty(slot)) this.free.push(slot);
          else for (const dir of new Set(slot.dirs.values())) await removeTree(dir);
        },
      };
    } catch (err) {
      if (pids) rmdirQuietly(pids);
      this.free.push(slot);
      throw err;
    }
  }

  /** New reusable cgroups in every hierarchy but pids. */
  private slot(): Slot {
    const dirs = new Map<V1Controller, string>();
    const name = `run-${++this.seq}`;
    for (const c of V1_CONTROLLERS) {
      const parent = this.parents[c];
      if (!parent || c === 'pids') continue;
      const dir = path.join(parent, name);
      // Hierarchies holding several controllers share the directory: made once.
      if (![...dirs.values()].includes(dir)) fs.mkdirSync(dir);
      dirs.set(c, dir);
    }
    return { dirs, weighted: false };
  }

  /** Removes the queue's parents; one still busy (a run's leftovers) is left for the next start. */
  close(): void {
    for (const dir of new Set(Object.values(this.parents))) {
      clearRuns(dir);
      rmdirQuietly(dir);
    }
  }
}

/** Removes the empty run cgroups in `dir`: those a crashed queue process left, once their processes are gone. */
function clearRuns(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmdirQuietly(path.join(dir, e.name));
}

function rmdirQuietly(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Still busy: its processes outlived their run; the queue's next start tries again.
  }
}

function weightFile(dir: string): string | null {
  for (const f of ['blkio.weight', 'blkio.bfq.weight']) if (fs.existsSync(path.join(dir, f))) return f;
  return null;
}

function write(dir: string, file: string, value: string | number): void {
  fs.writeFileSync(path.join(dir, file), String(value), { flag: 'r+' });
}

/** Writes every limit, set or lifted (-1: none), since the cgroups may carry the last run's. */
function setLimits(dirs: Map<V1Controller, string>, l: RunLimits, slot: Slot): void {
  const memory = dirs.get('memory');
  if (memory) {
    // With swap the run would swap past its limit: memsw is held to it too, lifted first so the memory limit may rise.
    const memsw = fs.existsSync(path.join(memory, 'memory.memsw.limit_in_bytes'));
    if (memsw) write(memory, 'memory.memsw.limit_in_bytes', -1);
    write(memory, 'memory.limit_in_bytes', l.memory_max ?? -1);
    if (memsw && l.memory_max !== undefined) write(memory, 'memory.memsw.limit_in_bytes', l.memory_max);
  }
  const cpu = dirs.get('cpu');
  if (cpu) {
    const period = numberFile(cpu, 'cpu.cfs_period_us') ?? 100_000;
    write(cpu, 'cpu.cfs_quota_us', l.cpu_max === undefined ? -1 : Math.max(1000, Math.round(l.cpu_max * period)));
  }
  const pids = dirs.get('pids');
  if (pids && l.pids_max !== undefined) write(pids, 'pids.max', l.pids_max);
  const blkio = dirs.get('blkio');
  const weight = blkio ? weightFile(blkio) : null;
  if (blkio && weight && (l.io_weight !== undefined || slot.weighted)) write(blkio, weight, v1Weight(weight, l.io_weight ?? 100));
  slot.weighted = l.io_weight !== undefined;
}

/**
 * io_weight (v2's scale: 1-10000, 100 the default share) on a v1 weight file: BFQ's runs 1-1000 with
 * the same default; the old CFQ's 10-1000 with 500 as the default share.
 */
function v1Weight(file: string, ioWeight: number): number {
  return file === 'blkio.bfq.weight' ? Math.min(1000, ioWeight) : Math.min(1000, Math.max(10, ioWeight * 5));
}

/** Resets what can be reset (peak memory, CPU time, IO bytes) and reads the base of what cannot. */
function resetCounters(dirs: Map<V1Controller, string>): Baseline {
  const memory = dirs.get('memory');
  if (memory) write(memory, 'memory.max_usage_in_bytes', 0);
  const cpuacct = dirs.get('cpuacct');
  if (cpuacct) write(cpuacct, 'cpuacct.usage', 0);
  const blkio = dirs.get('blkio');
  if (blkio && fs.existsSync(path.join(blkio, 'blkio.reset_stats'))) write(blkio, 'blkio.reset_stats', 1);
  const cpu = dirs.get('cpu');
  return {
    oomKills: memory ? (keyedNumbers(readCgroupFile(memory, 'memory.oom_control')).get('oom_kill') ?? 0) : 0,
    throttledNs: cpu ? (keyedNumbers(readCgroupFile(cpu, 'cpu.stat')).get('throttled_time') ?? 0) : 0,
  };
}

/** Whether no process is left in the slot's cgroups, so the next run may have them. */
function isEmpty(slot: Slot): boolean {
  return [...slot.dirs.values()].every((dir) => (readCgroupFile(dir, 'cgroup.procs') ?? 'gone').trim() === '');
}

function readUsage(dirs: Map<V1Controller, string>, limits: RunLimits, base: Baseline): { usage: Partial<RunUsage>; oom: string | null } {
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
  const blkio = dirs.get('blkio');
  const io = blkio ? blkioBytes(readCgroupFile(blkio, 'blkio.throttle.io_service_bytes_recursive')) : undefined;
  if (io) Object.assign(usage, { io_read_bytes: io.read, io_write_bytes: io.write });
  const cpu = dirs.get('cpu');
  const throttled = cpu ? keyedNumbers(readCgroupFile(cpu, 'cpu.stat')).get('throttled_time') : undefined;
  if (throttled !== undefined) usage.throttled_ms = Math.round((throttled - base.throttledNs) / 1e6);
  const oomKills = memory ? (keyedNumbers(readCgroupFile(memory, 'memory.oom_control')).get('oom_kill') ?? 0) - base.oomKills : 0;
  const oom =
    oomKills > 0 && limits.memory_max !== undefined
      ? `OOM - killed at memory_max ${formatSize(limits.memory_max)} (peak ${formatSize(roundMiB(peak ?? limits.memory_max))})`
      : null;
  return { usage, oom };
}

/** A peak to the MiB, as a status says it (the kernel counts pages). */
function roundMiB(bytes: number): number {
  return Math.round(bytes / 1024 ** 2) * 1024 ** 2;
}
