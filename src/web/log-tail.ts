// Follows one job log as it grows, by filesystem events only, until its message reaches a terminal state.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { isFinished } from '../message/states.js';
import { openBeneath } from '../spool/beneath.js';
import { Doubling } from '../backoff.js';

export interface Located {
  state: string;
  status: string;
  /** Absolute message directory. */
  dir: string;
}

export interface LogTailDeps {
  /** Where the message is now (asks its queue), or null when it no longer exists. */
  locate: () => Promise<Located | null>;
  /** The queue's flat state directories (prep/, que/, run/): every state change renames the message out of one. */
  stateDirs: string[];
  msgId: string;
  /** File name under the message's job/ directory. */
  file: string;
  /** Byte offset to start from (resume). */
  offset: number;
  /** Delivers bytes; resolves when the consumer can take more (backpressure). */
  send: (text: string, nextOffset: number) => Promise<void>;
  /** The message moved to another state. */
  state: (loc: Located) => void;
  /** Final call: the message is terminal (and every byte was sent) or gone. */
  end: (loc: Located | null) => void;
  log: Logger;
}

const CHUNK = 64 * 1024;
/**
 * A queue that does not answer a look (busy, restarting) is asked again after this doubling
 * delay; one that stays silent past the window is taken as gone. This is about the queue's
 * process, never about where the message is: a move is waited for by its event.
 */
const UNANSWERED_FIRST_MS = 5;
const UNANSWERED_MAX_MS = 1000;
/** Without a watch on every state directory a move may pass unseen: look again this often until it is found. */
const UNWATCHED_LOOK_MS = 1000;

/** Length of `buf` without a UTF-8 sequence cut at its end (that part is sent with the next read). */
export function completeUtf8Length(buf: Buffer, len: number): number {
  let i = len - 1;
  let back = 0;
  while (i >= 0 && back < 4 && (buf[i] & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return len;
  const lead = buf[i];
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return len - i >= need ? len : i;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fsp.access(p);
    return true;
  } catch {
    return false;
  }
}

export class LogTail {
  private offset: number;
  private fh: fsp.FileHandle | null = null;
  private fileWatcher: fs.FSWatcher | null = null;
  private dirWatcher: fs.FSWatcher | null = null;
  private readonly stateWatchers: fs.FSWatcher[] = [];
  private closed = false;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private checking: Promise<void> | null = null;
  private checkAgain = false;
  private lastState: string | null = null;
  private lastDir: string | null = null;
  /** The queue said "not found" and no state directory held the message: one more such answer ends the tail. */
  private goneOnce = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly unanswered = new Doubling({ baseMs: UNANSWERED_FIRST_MS, maxMs: Infinity });

  constructor(private readonly deps: LogTailDeps) {
    this.offset = deps.offset;
  }

  /** Watches first, then looks: a change between the two is never missed. */
  async start(): Promise<void> {
    for (const dir of this.deps.stateDirs) {
      try {
        const w = fs.watch(dir, (_event, name) => {
          if (name === this.deps.msgId || name === `.${this.deps.msgId}`) this.check();
        });
        w.on('error', () => undefined);
        this.stateWatchers.push(w);
      } catch (err) {
        this.deps.log.debug({ dir, err: (err as Error).message }, 'cannot watch state dir');
      }
    }
    this.check();
    await this.checking;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.stateWatchers) w.close();
    this.fileWatcher?.close();
    this.dirWatcher?.close();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const fh = this.fh;
    this.fh = null;
    // Close after any read in flight finishes with the handle.
    void (this.reading ?? Promise.resolve()).finally(() => fh?.close().catch(() => undefined));
  }

  /** Re-locates the message (serialised; a request during a check runs one more). */
  private check(): void {
    if (this.closed) return;
    if (this.checking) {
      this.checkAgain = true;
      return;
    }
    this.checking = (async () => {
      do {
        this.checkAgain = false;
        await this.checkOnce();
      } while (this.checkAgain && !this.closed);
    })()
      .catch((err) => {
        this.deps.log.warn({ err: (err as Error).message }, 'log tail check failed');
        this.finish(null);
      })
      .finally(() => {
        this.checking = null;
      });
  }

  /** Looks again after `ms` (one timer at a time). */
  private lookAfter(ms: number): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.check();
    }, ms);
  }

  /** The queue did not answer: asks again shortly (backing off), unless its silence has lasted the window: then false. */
  private askAgain(): boolean {
    if (this.unanswered.peek() > UNANSWERED_MAX_MS) return false;
    this.lookAfter(this.unanswered.next());
    return true;
  }

  /**
   * The message is between two places: the queue's answer is older than the disk, or the queue
   * holds it in no index for a moment (a commit reading it). Either way the rename that follows is
   * in prep/, que/ or run/, whose watches look again when it lands, so there is nothing to time:
   * load can delay that event, never lose it. Only an unwatched state directory needs a timer.
   */
  private awaitMove(): void {
    if (this.stateWatchers.length < this.deps.stateDirs.length) this.lookAfter(UNWATCHED_LOOK_MS);
  }

  /** Whether one of the watched state directories holds the message now (so its next move is an event). */
  private async inStateDir(): Promise<boolean> {
    for (const dir of this.deps.stateDirs) if (await exists(path.join(dir, this.deps.msgId))) return true;
    return false;
  }

  private async checkOnce(): Promise<void> {
    let loc: Located | null;
    try {
      loc = await this.deps.locate();
    } catch (err) {
      if (this.askAgain()) return;
      throw err;
    }
    this.unanswered.reset();
    if (this.closed) return;
    if (loc && !isFinished(loc.state) && !(await exists(loc.dir))) {
      // Moved since the queue answered (its memory follows each rename at once): the move's event looks again.
      this.awaitMove();
      return;
    }
    if (!loc) {
      // Not in the queue's indexes: deleted, or between two places for a moment (then still in a state dir).
      if (await this.inStateDir()) {
        this.goneOnce = false;
        return this.awaitMove();
      }
      // In none of them either: a second "not found", asked after the disk said so, is final.
      if (this.goneOnce) {
        await this.read();
        this.finish(null);
        return;
      }
      this.goneOnce = true;
      this.check();
      return;
    }
    this.goneOnce = false;
    if (loc.state !== this.lastState) {
      this.lastState = loc.state;
      this.deps.state(loc);
    }
    if (!this.fh) await this.open(loc.dir);
    else if (!this.fileWatcher && !isFinished(loc.state)) this.watchLog(loc.dir);
    await this.read();
    if (isFinished(loc.state)) {
      // The script has exited: whatever is in the file now is all there will be.
      await this.read();
      this.finish(loc);
    }
  }

  /** Opens the log; until it exists, watches the message directory tree for it to appear. */
  private async open(dir: string): Promise<void> {
    try {
      // Through job/ as it is now, no link followed: a script may have swapped either for a link or a FIFO.
      this.fh = (await openBeneath(dir, ['job', this.deps.file], this.deps.file)).fh;
    } catch {
      if (this.lastDir !== dir) {
        this.dirWatcher?.close();
        this.lastDir = dir;
        try {
          // The directory may move (que ⇒ run) — the watch follows the inode; state events re-locate it.
          this.dirWatcher = fs.watch(dir, { recursive: true }, () => this.check());
          this.dirWatcher.on('error', () => undefined);
        } catch {
          this.dirWatcher = null;
        }
      }
      return;
    }
    this.dirWatcher?.close();
    this.dirWatcher = null;
    this.watchLog(dir);
  }

  /**
   * Watches the opened log for appends. An inotify watch follows the file's inode, so it keeps firing
   * after run/ ⇒ done/; but it is set up by path, and the message may have moved since the open: then
   * the handle still reads the file, and the look that the move's event brings watches it where it is.
   */
  private watchLog(dir: string): void {
    try {
      this.fileWatcher = fs.watch(path.join(dir, 'job', this.deps.file), () => void this.read().catch(() => undefined));
      this.fileWatcher.on('error', () => undefined);
    } catch (err) {
      this.fileWatcher = null;
      this.deps.log.debug({ dir, err: (err as Error).message }, 'log moved before it was watched');
    }
  }

  /** Sends everything from the offset to the current end (serialised; calls during a read run one more pass). */
  private read(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        await this.readOnce();
      } while (this.readAgain && !this.closed);
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    // Held only while a pass reads, not for the life of the tail: a thousand idle tails held 64 MiB.
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const fh = this.fh;
      if (!fh || this.closed) return;
      const { bytesRead } = await fh.read(buf, 0, CHUNK, this.offset);
      if (bytesRead === 0) return;
      const len = completeUtf8Length(buf, bytesRead);
      // A lone cut sequence at the very end waits for its remaining bytes.
      if (len === 0) return;
      this.offset += len;
      await this.deps.send(buf.toString('utf8', 0, len), this.offset);
      if (bytesRead < CHUNK && len === bytesRead) return;
    }
  }

  private finish(loc: Located | null): void {
    if (this.closed) return;
    this.deps.end(loc);
    this.close();
  }
}
