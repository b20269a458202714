// An append-only journal file whose appends share one fdatasync per batch (group commit), and can be rewritten between batches.
import fs from 'node:fs/promises';
import { writeAll } from './write-all.js';

/**
 * An append-only journal with group commit: one fdatasync for every record written while the
 * last one ran, so writers pay one shared sync, not one each. A compaction runs inside the same loop, so no append
 * can land in the file it replaces.
 */
export class GroupAppender {
  private handle: fs.FileHandle | null = null;
  private pending: { line: string; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  private compaction: (() => Promise<void>) | null = null;
  private torn = false;

  constructor(private readonly file: string) {}

  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ line, done: (err) => (err ? reject(err) : resolve()) });
      this.flushing ??= this.flush();
    });
  }

  /** Replaces the file by what `rewrite` writes, between two batches; resolves when it has. */
  compact(rewrite: () => Promise<void>): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      // A compaction asked for while another waits runs after it, in the same pause between batches.
      const earlier = this.compaction;
      this.compaction = async () => {
        await earlier?.();
        await rewrite().then(resolve, reject);
      };
    });
    this.flushing ??= this.flush();
    return done;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0 || this.compaction) {
      const rewrite = this.compaction;
      this.compaction = null;
      if (rewrite) {
        await this.handle?.close();
        this.handle = null;
        await rewrite().catch(() => undefined);
        this.torn = false;
        continue;
      }
      const batch = this.pending.splice(0);
      try {
        this.handle ??= await fs.open(this.file, 'a', 0o640);
        // After a failed write (ENOSPC midway) the file may end inside a line: start a fresh one, or
        // the next record would be glued to the torn one and both be unreadable at load.
        await writeAll(this.handle, Buffer.from((this.torn ? '\n' : '') + batch.map((b) => b.line).join('')));
        await this.handle.datasync();
        this.torn = false;
        for (const b of batch) b.done();
      } catch (err) {
        this.torn = true;
        for (const b of batch) b.done(err);
      }
    }
    this.flushing = null;
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = null;
  }
}
