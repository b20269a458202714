// Blank message directories made ahead in idle time, so that a create makes no inode on its path.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SpoolFs } from './spool-fs.js';

/** Blanks per trip to the thread pool when the addon makes them (SpoolFs.makeBlanks). */
const BATCH = 8;

/** Below this many descriptors the process may hold, blanks keep none open: its scripts need them more (pipes, headroom). */
const KEEP_OPEN_MIN_FDS = 1024;

/** The process's limit of open files (the soft one, /proc/self/limits); Infinity when unlimited or unreadable. */
function openFilesLimit(): number {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : Infinity;
  } catch {
    return Infinity;
  }
}

/** A ready blank: its path and, when the addon made it, its inode number and its msg open for writing. */
export interface Blank {
  dir: string;
  made?: { ino: number; fd: number };
}

/**
 * `<dir>/<n>` holding an empty msg, history, pid and job/stdio.log. A create takes one, so neither
 * the create nor the script's start (nor its pid, written just after) makes an inode on its path.
 * Making an inode is the dearest metadata operation; on ext4 it costs up to ~1 ms for minutes
 * after many deletes nearby (docs/performance.md). While `staged` says no message made now would
 * start soon (a paused queue, a backlog), a blank is the dir and its msg only: the run files would
 * be four inodes per create for a start that is far off, and that start makes them anyway.
 * Recovery removes leftovers (the whole of `dir`).
 */
export class BlankDirs {
  private readonly ready: Blank[] = [];
  private refill: Promise<void> | null = null;
  private closed = false;
  private seq = 0;
  /** `dir` exists: made by the first refill, looked for again only after a refill failed. */
  private dirMade = false;
  /** A take came while a refill was under way: if that refill stops on an error, the take still gets its own try. */
  private takenDuringRefill = false;

  constructor(
    readonly dir: string,
    private readonly want: number,
    private readonly fs: SpoolFs,
    private readonly staged: () => boolean = () => true,
    /** Whether the addon's blanks come with their msg open (up to `want` descriptors held); not where descriptors are few. */
    private readonly keepOpen = openFilesLimit() >= KEEP_OPEN_MIN_FDS,
  ) {}

  /** A ready blank, if any (its msg descriptor is then the caller's to close); either way the pool is topped up in the background. */
  take(): Blank | undefined {
    // Oldest first: blanks made light while the queue was paused are used up after a resume, not kept for ever under newer ones.
    const blank = this.ready.shift();
    // After the create that took it: it may start its message in the same synchronous call.
    queueMicrotask(() => this.topUp());
    return blank;
  }

  /**
   * Stops making blanks, waits for the one being made, and closes the msg descriptors of those not taken: a
   * create after it still gets a blank, and opens its msg itself.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.refill;
    for (const b of this.ready) {
      const fd = b.made?.fd;
      // Forgotten first: a close that throws leaves no blank holding a descriptor that may be gone.
      b.made = undefined;
      if (fd !== undefined) this.fs.closeSync(fd);
    }
  }

  /**
   * In the background, one refill at a time; a disk error just stops it. Once the pool is down to
   * half: a refill after every take made one blank a trip, the trip's overhead paid per create.
   */
  private topUp(): void {
    if (this.refill) this.takenDuringRefill = true;
    if (this.refill || this.closed || this.ready.length > this.want / 2) return;
    this.refill = (async () => {
      try {
        if (!this.dirMade) await this.fs.mkdir(this.dir, { recursive: true });
        this.dirMade = true;
        while (!this.closed && this.ready.length < this.want) {
          const staged = this.staged();
          const files = staged ? ['msg', 'history', 'pid', path.join('job', 'stdio.log')] : ['msg'];
          if (this.fs.makeBlanks) {
            // A refill is one job on the thread pool, at most BATCH blanks so the first ones arrive soon.
            const dirs = Array.from({ length: Math.min(BATCH, this.want - this.ready.length) }, () => this.next());
            const made = await this.fs.makeBlanks(dirs, staged ? ['job'] : [], files, this.keepOpen);
            for (const [i, [ino, fd]] of made.entries()) this.ready.push(fd >= 0 ? { dir: dirs[i], made: { ino, fd } } : { dir: dirs[i] });
            // A blank that could not be made stops the refill, as a thrown disk error does (a take meanwhile still gets its try, below).
            if (made.length < dirs.length) {
              this.dirMade = false;
              break;
            }
            continue;
          }
          const dir = this.next();
          await this.fs.mkdir(staged ? path.join(dir, 'job') : dir, { recursive: true });
          for (const f of files) await (await this.fs.open(path.join(dir, f), 'wx', 0o644)).close();
          this.ready.push({ dir });
        }
      } catch {
        // Creates make their directories themselves until the next refill succeeds.
        this.dirMade = false;
      } finally {
        this.refill = null;
      }
      if (this.takenDuringRefill) {
        this.takenDuringRefill = false;
        this.topUp();
      }
    })();
  }

  private next(): string {
    return path.join(this.dir, `${process.pid}.${this.seq++}`);
  }
}
