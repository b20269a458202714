// Blank message directories made ahead in idle time, so that a create makes no inode on its path.
import path from 'node:path';
import type { SpoolFs } from './spool-fs.js';

/**
 * `<dir>/<n>` holding an empty msg, history and job/stdio.log. A create takes one, so neither the
 * create nor the script's start makes an inode on its path. Making an inode is the dearest
 * metadata operation; on ext4 it costs up to ~1 ms for minutes after many deletes nearby
 * (docs/performance.md). While `staged` says no message made now would start soon (a paused
 * queue, a backlog), a blank is the dir and its msg only: the run files would be three inodes
 * per create for a start that is far off, and that start makes them anyway. Recovery removes
 * leftovers (the whole of `dir`).
 */
/**
 * Blanks made at once: one keeps up with creates one at a time; a bulk create takes them faster
 * than one lane of thread-pool round trips makes them, and four lanes (libuv's pool size) let the
 * inode work overlap the creates' own writes and renames on the main thread.
 */
const LANES = 4;

export class BlankDirs {
  private readonly ready: string[] = [];
  private readonly making = new Set<Promise<void>>();
  /** A refill failed (a full disk, say): none is tried again until a create takes a blank. */
  private failed = false;
  private madeDir = false;
  private closed = false;
  private seq = 0;

  constructor(
    readonly dir: string,
    private readonly want: number,
    private readonly fs: SpoolFs,
    private readonly staged: () => boolean = () => true,
  ) {}

  /** A ready blank, if any; either way the pool is topped up in the background. */
  take(): string | undefined {
    // Oldest first: blanks made light while the queue was paused are used up after a resume, not kept for ever under newer ones.
    const blank = this.ready.shift();
    this.failed = false;
    this.topUp();
    return blank;
  }

  /** Stops making blanks and waits for those being made. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.making);
  }

  /** Up to LANES blanks in the making; a disk error stops the refill until the next take. */
  private topUp(): void {
    while (!this.closed && !this.failed && this.making.size < LANES && this.ready.length + this.making.size < this.want) {
      const one: Promise<void> = this.makeOne().then(
        () => {
          this.making.delete(one);
          this.topUp();
        },
        () => {
          this.making.delete(one);
          // Creates make their directories themselves until a refill succeeds.
          this.failed = true;
        },
      );
      this.making.add(one);
    }
  }

  private async makeOne(): Promise<void> {
    if (!this.madeDir) {
      await this.fs.mkdir(this.dir, { recursive: true });
      this.madeDir = true;
    }
    const dir = path.join(this.dir, `${process.pid}.${this.seq++}`);
    const staged = this.staged();
    await this.fs.mkdir(staged ? path.join(dir, 'job') : dir, { recursive: true });
    for (const f of staged ? ['msg', 'history', path.join('job', 'stdio.log')] : ['msg']) await (await this.fs.open(path.join(dir, f), 'wx', 0o644)).close();
    if (this.closed) return;
    this.ready.push(dir);
  }
}
