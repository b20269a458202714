// A queue's run limits on the host's cgroup v1 hierarchies: which limits can be enforced here, and each run's cgroups, used again by the next run.
import fs from 'node:fs';
import path from 'node:path';
import type { RunLimits } from '../../message/run-limits.js';
import { type V1Controller, type V1Homes, V1_CONTROLLERS } from './cgroup-v1.js';
import { type SlotState, allEmpty, endAndRemove, holdsAtHigh, readUsage, releaseMemory, resetCounters, setLimits, weightFile } from './limit-files.js';
import { MemoryHigh } from './memory-high.js';
import type { RunUsage } from './run-usage.js';

/** The controller each limit needs. */
const NEEDS: Record<keyof RunLimits, V1Controller> = { memory_max: 'memory', memory_high: 'memory', cpu_max: 'cpu', pids_max: 'pids', io_weight: 'blkio' };

/** One run's cgroups: what its process joins, then what it used. */
export interface LimitRun {
  /** cgroup.procs files the script joins before its first instruction. */
  joins: string[];
  /** What the run used so far, and the OOM status when the kernel's OOM killer ended one of its processes. */
  read(): { usage: Partial<RunUsage>; oom: string | null };
  /** Once the run's grace is over: ends what is left in its cgroups, and keeps them for the next run or removes them. */
  remove(): Promise<void>;
}

/** A run's reusable cgroups (every hierarchy but pids). */
interface Slot extends SlotState {
  dirs: Map<V1Controller, string>;
}

/** The queue's parent cgroup in each hierarchy it can use, by controller (hierarchies holding several share one). */
export class LimitCgroups {
  private seq = 0;
  /** Cgroups of runs that are over, emptied, ready for the next run. */
  private readonly free: Slot[] = [];

  private constructor(
    private readonly parents: Partial<Record<V1Controller, string>>,
    /** Why each controller is not usable here. */
    private readonly missing: Partial<Record<V1Controller, string>>,
    /** The scheduler of the disk the queue is on ("bfq" is the one that weighs), null when unknown. */
    private readonly scheduler: string | null,
  ) {}

  /**
   * Makes (or takes over) `name` in each v1 hierarchy of `homes` (`scheduler` is that of the queue's disk), ending and removing what runs of
   * a crashed queue process left there; a hierarchy that refuses is noted, not fatal.
   */
  static async open(name: string, homes: V1Homes, scheduler: string | null): Promise<LimitCgroups> {
    const parents: Partial<Record<V1Controller, string>> = {};
    const missing: Partial<Record<V1Controller, string>> = {};
    for (const c of V1_CONTROLLERS) {
      const home = homes[c];
      if (home === undefined) missing[c] = `no cgroup v1 ${c} hierarchy`;
      else if ('why' in home) missing[c] = home.why;
      else {
        const dir = path.join(home.dir, name);
        try {
          fs.mkdirSync(dir, { recursive: true });
          const left = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
          await endAndRemove(left.map((e) => path.join(dir, e.name)));
          parents[c] = dir;
        } catch (err) {
          missing[c] = `cannot make a cgroup in ${home.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
        }
      }
    }
    return new LimitCgroups(parents, missing, scheduler);
  }

  /** Why limit `f` cannot be enforced through the v1 hierarchies here, null when it can. */
  why(f: keyof RunLimits): string | null {
    const c = NEEDS[f];
    if (!this.parents[c]) return this.missing[c] ?? `no cgroup v1 ${c} hierarchy`;
    if (f === 'io_weight' && weightFile(this.parents.blkio!) === null) return 'the blkio hierarchy has no weight file (no BFQ in this kernel)';
    if (f === 'io_weight' && this.scheduler !== 'bfq')
      return `the queue's disk is scheduled by ${this.scheduler ?? 'an unknown scheduler'}, and only bfq weighs IO`;
    return null;
  }

  /** Whether a v1 hierarchy is usable here: a run with limits gets cgroups there, which also account for it. */
  get usable(): boolean {
    return Object.keys(this.parents).length > 0;
  }

  /**
   * The run's cgroups with `limits` (those enforceable here) and the accounting ones, or throws what
   * refused. Those of a run that is over are used again (emptied of its pages, counters reset, limits
   * rewritten): making and removing a memory cgroup per run halved a drain's rate. The pids cgroup is
   * made per run, since pids.peak cannot be reset. A reused set the limits cannot be written to is
   * dropped for a new one.
   */
  make(runName: string, limits: RunLimits): LimitRun {
    for (;;) {
      const reused = this.free.pop();
      const slot = reused ?? this.slot();
      try {
        return this.prepare(slot, runName, limits);
      } catch (err) {
        // Its cgroups go either way; a new one's failure is the answer, a reused one's makes way for a new one.
        void endAndRemove(new Set(slot.dirs.values())).catch(() => undefined);
        if (!reused) throw err;
      }
    }
  }

  private prepare(slot: Slot, runName: string, limits: RunLimits): LimitRun {
    let pids: string | null = null;
    if (this.parents.pids) {
      pids = path.join(this.parents.pids, `${runName}-${process.pid}-${++this.seq}`);
      fs.mkdirSync(pids);
    }
    const dirs = new Map(slot.dirs);
    if (pids) dirs.set('pids', pids);
    try {
      const base = resetCounters(slot.dirs);
      setLimits(dirs, limits, slot);
      const memory = dirs.get('memory');
      const high = memory && holdsAtHigh(limits) ? new MemoryHigh(memory, limits.memory_high!, limits.memory_max) : null;
      return {
        joins: [...new Set(dirs.values())].map((dir) => path.join(dir, 'cgroup.procs')),
        read: () => {
          const read = readUsage(dirs, limits, base);
          if (high) Object.assign(read.usage, high.read());
          return read;
        },
        remove: async () => {
          high?.stop();
          if (pids) await endAndRemove([pids]);
          await this.giveBack(slot);
        },
      };
    } catch (err) {
      if (pids) fs.rmdirSync(pids);
      throw err;
    }
  }

  /** A finished run's slot: emptied and kept when nothing is left in it, else ended and removed. */
  private async giveBack(slot: Slot): Promise<void> {
    const dirs = new Set(slot.dirs.values());
    const memory = slot.dirs.get('memory');
    if (allEmpty(dirs) && (!memory || (await releaseMemory(memory)))) this.free.push(slot);
    else await endAndRemove(dirs);
  }

  /** New reusable cgroups in every hierarchy but pids, named by this process so none is taken for a crashed one's. */
  private slot(): Slot {
    const dirs = new Map<V1Controller, string>();
    const name = `run-${process.pid}-${++this.seq}`;
    for (const c of V1_CONTROLLERS) {
      const parent = this.parents[c];
      if (!parent || c === 'pids') continue;
      const dir = path.join(parent, name);
      // Hierarchies holding several controllers share the directory: made once.
      if (![...dirs.values()].includes(dir)) fs.mkdirSync(dir);
      dirs.set(c, dir);
    }
    return { dirs, weighted: false, holding: false };
  }

  /** Removes the queue's cgroups, ending what is left in them; one still busy is left for the next start. */
  async close(): Promise<void> {
    for (const dir of new Set(Object.values(this.parents))) {
      const runs = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
      await endAndRemove([...runs.map((e) => path.join(dir, e.name)), dir]).catch(() => undefined);
    }
  }
}
