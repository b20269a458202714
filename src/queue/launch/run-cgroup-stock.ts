// The run cgroups a queue keeps ready in its parent cgroup: made ahead on the thread pool, and kept from runs that ended leaving nothing and changing nothing, so a start seldom makes one and an end seldom removes one.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { procText } from './cgroup-fs.js';

/** How many ready cgroups are kept at most: more than a queue has runs in flight, and each is a few KiB of the kernel's. */
const KEPT = 8;

/**
 * Whether an ended run's cgroup is as a new one would be, for the next run: no process in it or below it, not frozen,
 * no cgroup below it, still a domain (not made threaded), and the limits on its own subtree at their defaults. A
 * script can write its run cgroup's files (it runs as the queue's user); a cgroup it changed is removed, not passed on.
 */
export function asNew(dir: string): boolean {
  const read = (file: string) => procText(path.join(dir, file));
  const events = read('cgroup.events');
  return (
    /^populated 0$/m.test(events) &&
    !/^frozen 1$/m.test(events) &&
    /^nr_descendants 0$/m.test(read('cgroup.stat')) &&
    read('cgroup.type') === 'domain\n' &&
    read('cgroup.max.descendants') === 'max\n' &&
    read('cgroup.max.depth') === 'max\n'
  );
}

/**
 * A cgroupfs mkdir is ~55 µs of system time and an rmdir ~35, on every run: one of the larger steps
 * around a spawn. A run that exits by itself, leaving no process and no change to its cgroup
 * (asNew; no controllers are enabled in the parent, so there are no counters to reset), leaves it
 * for the next run to start in.
 */
export class RunCgroupStock {
  private seq = 0;
  private readonly ready: string[] = [];
  /** The mkdir in flight: one at a time, and a close waits for it. */
  private making: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly parent: string) {}

  /** A new cgroup `run-<n>` in `parent` (this stock's, or the one for runs with limits); an `n` a previous process of the queue left is skipped. */
  make(parent = this.parent): string {
    for (let tries = 0; ; tries++) {
      const dir = path.join(parent, `run-${++this.seq}`);
      try {
        fs.mkdirSync(dir);
        return dir;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 3) throw err;
      }
    }
  }

  /** A ready cgroup, or null when none is. */
  take(): string | null {
    for (let dir; (dir = this.ready.pop());) {
      // Removed behind the queue's back (an operator, a cgroup manager): not used.
      if (fs.existsSync(dir)) return dir;
    }
    return null;
  }

  /**
   * Makes one on the thread pool when none is ready, so the main thread does not pay for it before
   * a start. A failure (a name taken, too) leaves none: the next start makes its own and says why if
   * that fails too.
   */
  restock(): Promise<void> {
    if (this.closed || this.ready.length || this.making) return this.making ?? Promise.resolve();
    const dir = path.join(this.parent, `run-${++this.seq}`);
    this.making = fsp
      .mkdir(dir)
      .then(
        () => {
          // Made as the queue closed: the parent's removal takes it (the close waits for this).
          if (!this.closed) this.ready.push(dir);
        },
        () => undefined,
      )
      .finally(() => (this.making = null));
    return this.making;
  }

  /** An ended run's cgroup, kept ready when it is as a new one (asNew) and there is room; false: the caller removes it. */
  keep(dir: string): boolean {
    if (this.closed || this.ready.length >= KEPT || !asNew(dir)) return false;
    this.ready.push(dir);
    return true;
  }

  /** Stops making and keeping; resolves once a mkdir in flight is done. What is ready goes with the parent's removal. */
  close(): Promise<void> {
    this.closed = true;
    this.ready.length = 0;
    return this.making ?? Promise.resolve();
  }
}
