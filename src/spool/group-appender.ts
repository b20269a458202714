// An append-only journal file whose appends share one fdatasync per batch (group commit), and can be rewritten between batches.
import fsp from 'node:fs/promises';
import { type SpoolFile, type SpoolFs, nodeSpoolFs } from './spool-fs.js';
import { writeAll } from './write-all.js';

/**
 * An append-only journal with group commit: one fdatasync for every record appended in the same turn of
 * the event loop, or while the last one ran, so writers pay one shared sync, not one each. A compaction runs
 * inside the same loop, so no append can land in the file it replaces.
 */
export class GroupAppender {
  private handle: SpoolFile | null = null;
  /** The file's length after the last batch that succeeded: a failed batch is cut back to it. */
  private size = 0;
  private pending: { line: string; done: (err?: unknown) => void }[] = [];
  private flushing: Promise<void> | null = null;
  /** A batch is to start once the event loop has run this turn's other callbacks (setImmediate). */
  private scheduled = false;
  private compaction: (() => Promise<void>) | null = null;
  private torn = false;

  constructor(
    private readonly file: string,
    private readonly fs: SpoolFs = nodeSpoolFs,
  ) {}

  /**
   * Takes `handle`, this appender's file just made (empty, opened for append), before any append:
   * the first batch writes to it without opening the file again.
   */
  adopt(handle: SpoolFile): void {
    this.handle = handle;
    this.size = 0;
  }

  append(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ line, done: (err) => (err ? reject(err) : resolve()) });
      this.schedule();
    });
  }

  /**
   * Starts a batch at the end of this turn of the event loop, unless one runs (its loop takes what waits): the
   * requests read in the same turn (one from each client that sent) then share one write and one fdatasync,
   * where the first would have gone alone and the others waited for its sync to end.
   */
  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.pending.length > 0) this.flushing ??= this.flush();
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
        // The old descriptor is let go either way (EIO at close): the rewrite makes the file anew, and a throw here
        // would leave this loop marked running, answering no append again.
        await this.handle?.close().catch(() => undefined);
        this.handle = null;
        await rewrite().catch(() => undefined);
        this.torn = false;
        continue;
      }
      const batch = this.pending.splice(0);
      try {
        if (!this.handle) {
          this.handle = await this.fs.open(this.file, 'a', 0o640);
          this.size = (await fsp.stat(this.file)).size;
        }
        const text = (this.torn ? '\n' : '') + batch.map((b) => b.line).join('');
        const written = await this.writeAndSync(this.handle, text);
        this.size += written;
        this.torn = false;
        for (const b of batch) b.done();
      } catch (err) {
        await this.cutBack();
        for (const b of batch) b.done(err);
      }
    }
    this.flushing = null;
  }

  /**
   * The batch's text written and fdatasynced: one trip to the thread pool with the addon (a real file), else two; its
   * length in bytes. The addon takes the descriptor, not the handle: nothing may close the handle meanwhile, which
   * holds because only this loop closes it (a compaction, close() after the last batch). A test double that fakes a
   * real handle's calls spreads callByCallFs, whose appendDurable is absent, so its fakes are what run.
   */
  private async writeAndSync(handle: SpoolFile, text: string): Promise<number> {
    if (this.fs.appendDurable && handle.fd !== undefined) return this.fs.appendDurable(this.file, text, handle.fd);
    const bytes = Buffer.from(text);
    await writeAll(handle, bytes);
    await handle.datasync();
    return bytes.length;
  }

  /**
   * A batch whose callers are told it failed must not count later: whole lines of it may be in the
   * file (a write that went through before a failed fdatasync, ENOSPC at writeback). Cut back to
   * the last good length; if even that fails (ENOSPC midway can leave the file inside a line), the
   * next batch starts a fresh line, or its first record would be glued to the torn one.
   */
  private async cutBack(): Promise<void> {
    try {
      if (!this.handle) return;
      await this.handle.truncate(this.size);
      await this.handle.datasync();
      this.torn = false;
    } catch {
      this.torn = true;
    }
  }

  async close(): Promise<void> {
    if (this.pending.length > 0) this.flushing ??= this.flush();
    await this.flushing;
    await this.handle?.close();
    this.handle = null;
  }
}
