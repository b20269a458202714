// An append-only journal file whose appends share one fdatasync per batch (group commit), and can be rewritten between batches.
import fsp from 'node:fs/promises';
import { errnoError } from '../errors.js';
import { type JournalSyncThread, type SpoolFile, type SpoolFs, nodeSpoolFs } from './spool-fs.js';
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
  /**
   * The batch loop runs (set and cleared in the same turns as its checks, so an append never finds it ending); `flushing`
   * is its last run, for close() to wait on. A run that hands its batch to the sync thread ends without waiting.
   */
  private running = false;
  private flushing: Promise<void> = Promise.resolve();
  /** A batch is to start once the event loop has run this turn's other callbacks (setImmediate). */
  private scheduled = false;
  private compaction: (() => Promise<void>) | null = null;
  /** A refused batch is not yet cut away (its cut failed): nothing is written until it is. */
  private uncut = false;
  /** The file's own sync thread (the addon), once a batch has gone to it; and the records it has not yet settled, oldest first. */
  private thread: JournalSyncThread | null = null;
  private readonly handed: { seq: number; done: (err?: unknown) => void }[] = [];
  /** The last thread let go (release) has ended. */
  private ending: Promise<void> = Promise.resolve();

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
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.pending.length > 0) this.startFlush();
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
    this.startFlush();
    return done;
  }

  private startFlush(): void {
    if (!this.running) this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    this.running = true;
    while (this.pending.length > 0 || this.compaction) {
      const rewrite = this.compaction;
      this.compaction = null;
      if (rewrite) {
        // The old descriptor is let go either way (EIO at close): the rewrite makes the file anew, and a throw here
        // would leave this loop marked running, answering no append again.
        await this.release().catch(() => undefined);
        await rewrite().catch(() => undefined);
        this.uncut = false;
        continue;
      }
      const batch = this.pending.splice(0);
      try {
        if (!this.handle) {
          // A thread let go by close() may still be syncing the old descriptor's last records: theirs come first.
          await this.ending;
          this.handle = await this.fs.open(this.file, 'a', 0o640);
          this.size = (await fsp.stat(this.file)).size;
        }
        // No line of a refused batch may count later: until it is cut away, nothing is written after it.
        if (this.uncut) await this.cut();
        if (this.hand(batch)) continue;
        this.size += await this.writeAndSync(this.handle, batch.map((b) => b.line).join(''));
        for (const b of batch) b.done();
      } catch (err) {
        // A cut that just failed is tried again by the next batch, not twice for this one.
        if (this.handle && !this.uncut) await this.cut().catch(() => undefined);
        for (const b of batch) b.done(err);
      }
    }
    this.running = false;
  }

  /**
   * Gives the batch to the file's sync thread, where the addon is built and the handle is a real file: it writes and
   * fdatasyncs what it holds the moment its last sync ends, without waiting for this loop to run (rq-journal-sync.c).
   * Its records are answered as it reports them settled; false when there is no such thread to give them to. The
   * thread takes the descriptor, not the handle: only this loop closes the handle (a compaction, close()), and it
   * ends the thread first. A record it cannot take (out of memory) is refused with those after it, none written.
   */
  private hand(batch: { line: string; done: (err?: unknown) => void }[]): boolean {
    const fd = this.handle?.fd;
    if (!this.fs.journalSync || fd === undefined) return false;
    const thread = (this.thread ??= this.fs.journalSync(this.file, fd, this.size, (...settled) => this.settle(...settled)));
    for (const [i, b] of batch.entries()) {
      try {
        this.handed.push({ seq: thread.append(b.line), done: b.done });
      } catch (err) {
        for (const refused of batch.slice(i)) refused.done(err);
        break;
      }
    }
    thread.kick();
    return true;
  }

  /** Every record up to `upto` is durable, or (with `code`) refused and cut away. */
  private settle(upto: number, code?: string, message?: string, syscall?: string, errno?: number): void {
    const err = code === undefined ? undefined : Object.assign(errnoError(code, message ?? code), { errno, syscall, path: this.file });
    let n = 0;
    while (n < this.handed.length && this.handed[n]!.seq <= upto) n++;
    for (const h of this.handed.splice(0, n)) h.done(err);
  }

  /**
   * Lets go of the file: its sync thread ends once every record given to it is settled, then the handle is closed. Both
   * are taken in one turn, so a compaction or an append arriving meanwhile finds neither (a later batch opens the
   * file again, after that thread has ended) and a close() arriving meanwhile waits for the same end.
   */
  private async release(): Promise<void> {
    const { thread, handle } = this;
    this.thread = null;
    this.handle = null;
    if (thread) this.ending = thread.close();
    await this.ending;
    await handle?.close();
  }

  /** The batch's text written and fdatasynced through the handle, call by call (no addon, or a test double's handle); its length in bytes. */
  private async writeAndSync(handle: SpoolFile, text: string): Promise<number> {
    const bytes = Buffer.from(text);
    await writeAll(handle, bytes);
    await handle.datasync();
    return bytes.length;
  }

  /**
   * A batch whose callers are told it failed must not count later: whole lines of it may be in the file (a write
   * that went through before a failed fdatasync, ENOSPC at writeback). Cuts back to the last good length, durably;
   * while that fails (it rejects), the batch stays marked uncut, as rq-journal-thread.c does it.
   */
  private async cut(): Promise<void> {
    this.uncut = true;
    await this.handle!.truncate(this.size);
    await this.handle!.datasync();
    this.uncut = false;
  }

  async close(): Promise<void> {
    if (this.pending.length > 0) this.startFlush();
    await this.flushing;
    await this.release();
  }
}
