// memory_high on a cgroup v1 memory hierarchy, which has no throttling limit of its own: a run that reaches it is held by the kernel, then let on a step at a time, up to memory_max.
import fs from 'node:fs';
import path from 'node:path';
import { keyedNumbers, numberFile, readCgroupFile, writeCgroupFile } from './cgroup-files.js';

/** How often a held run is looked for, and so how long each step holds it (one to two of these). */
export const HIGH_POLL_MS = 50;
/** The least a held run is let on by: a step is an eighth of memory_high, at least this. */
const MIN_STEP = 4 * 1024 * 1024;

/** What holding a run at memory_high cost it: for the run's usage. */
export interface HighHolds {
  /** Times the run reached its ceiling and was held there. */
  memory_high_holds: number;
  /** Time it spent held, as seen by the queue. */
  memory_high_held_ms: number;
}

/**
 * Sets the memory cgroup `dir`'s ceiling: `memory.limit_in_bytes` and, where swap is accounted,
 * `memory.memsw.limit_in_bytes` with it (memsw may never be below the memory limit, so it rises
 * first and falls last). -1 lifts both.
 */
export function setCeiling(dir: string, bytes: number): void {
  const memsw = fs.existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'));
  if (memsw) writeCgroupFile(dir, 'memory.memsw.limit_in_bytes', -1);
  writeCgroupFile(dir, 'memory.limit_in_bytes', bytes);
  if (memsw && bytes !== -1) writeCgroupFile(dir, 'memory.memsw.limit_in_bytes', bytes);
}

/**
 * Whether the kernel's OOM killer acts at the cgroup's ceiling (0) or holds the processes that
 * reach it, asleep and killable, until the ceiling rises (1): memory_high's hold.
 */
export function setHolding(dir: string, holding: boolean): void {
  writeCgroupFile(dir, 'memory.oom_control', holding ? 1 : 0);
}

/**
 * cgroup v2's memory.high throttles a cgroup past it (reclaim, then sleeps) without killing. On v1
 * the same is had from the OOM control: the ceiling is memory_high with the OOM killer held, so the
 * kernel first reclaims (page cache goes before anything is held) and then holds a process that
 * still needs memory; the queue sees it held (`under_oom`), waits one poll, and raises the ceiling
 * by a step. At memory_max the OOM killer is let act again, so the run is killed there as a
 * memory_max alone would. Once the run is back below memory_high, its ceiling is too.
 */
export class MemoryHigh {
  private ceiling: number;
  private readonly step: number;
  private heldSince: number | null = null;
  private readonly holds: HighHolds = { memory_high_holds: 0, memory_high_held_ms: 0 };
  private readonly timer: NodeJS.Timeout;

  /** `dir` is set (setCeiling, setHolding) to memory_high and held before the run starts. */
  constructor(
    private readonly dir: string,
    private readonly high: number,
    private readonly max: number | undefined,
  ) {
    this.ceiling = high;
    this.step = Math.max(MIN_STEP, Math.ceil(high / 8 / 4096) * 4096);
    this.timer = setInterval(() => this.look(), HIGH_POLL_MS).unref();
  }

  private look(): void {
    const held = keyedNumbers(readCgroupFile(this.dir, 'memory.oom_control')).get('under_oom') === 1;
    const now = Date.now();
    try {
      if (held && this.heldSince === null) {
        // Seen held: held a poll longer, then let on.
        this.heldSince = now;
        this.holds.memory_high_holds++;
      } else if (held) this.letOn(now);
      else {
        this.release(now);
        this.lower();
      }
    } catch {
      // The cgroup is going (the run ended) or refused a write: the next look tries again, remove() stops it.
    }
  }

  /** One step more, up to memory_max, where the OOM killer acts again. */
  private letOn(now: number): void {
    const next = this.max === undefined ? this.ceiling + this.step : Math.min(this.max, this.ceiling + this.step);
    if (next === this.ceiling) return;
    setCeiling(this.dir, next);
    this.ceiling = next;
    if (next === this.max) setHolding(this.dir, false);
    this.release(now);
  }

  private release(now: number): void {
    if (this.heldSince === null) return;
    this.holds.memory_high_held_ms += now - this.heldSince;
    this.heldSince = null;
  }

  /** Back to memory_high once the run is below it by a step, so a second rise is held again. */
  private lower(): void {
    if (this.ceiling === this.high || (numberFile(this.dir, 'memory.usage_in_bytes') ?? Infinity) > this.high - this.step) return;
    if (this.ceiling === this.max) setHolding(this.dir, true);
    setCeiling(this.dir, this.high);
    this.ceiling = this.high;
  }

  /** The holds so far (a hold under way counted to now). */
  read(): HighHolds {
    const open = this.heldSince === null ? 0 : Date.now() - this.heldSince;
    return { ...this.holds, memory_high_held_ms: this.holds.memory_high_held_ms + open };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
