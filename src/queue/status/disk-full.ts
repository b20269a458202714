// DISK FULL, a queue state: the writes that end a run wait for space (retried with backoff) instead of failing the run, and dispatch waits with them.
import path from 'node:path';
import type { Logger } from 'pino';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { Doubling } from '../../backoff.js';

/** The first retry of a write that found no space, doubled after each failure up to MAX_RETRY_MS. */
export const FIRST_RETRY_MS = 100;
export const MAX_RETRY_MS = 5000;

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** The error in `err`'s chain (the spool wraps errno errors in RQ_ERR_DISK) that says the filesystem has no room, if one does. */
function noSpaceCause(err: unknown): { code?: unknown; cause?: unknown; message?: unknown } | null {
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && NO_SPACE.has(e.code)) return e;
  }
  return null;
}

/** Whether `err` (or what caused it) says the filesystem has no room. */
export function isNoSpace(err: unknown): boolean {
  return noSpaceCause(err) !== null;
}

/**
 * Counts the writes waiting for space. While any waits the queue is DISK FULL: no new script
 * starts (a run that could not be recorded would only add to what waits), and the admin state
 * says so. `changed` is called when the state comes and when it goes.
 */
export class DiskFull {
  private waiting = 0;
  private closed = false;
  /** What found no room last, and the error: the reason clients are given while DISK FULL lasts. */
  why: string | null = null;
  private readonly sleepers = new Set<() => void>();

  constructor(
    private readonly changed: () => void,
    private readonly log?: Logger,
  ) {}

  get full(): boolean {
    return this.waiting > 0;
  }

  /**
   * Runs `write` until it succeeds. A failure for want of space is tried again after 100 ms,
   * doubling to 5 s (a timer, no busy loop); any other failure, or any failure once the queue is
   * stopping, is thrown. The write must be safe to repeat (each spool write used here is).
   */
  retry<T>(what: string, write: () => Promise<T>): Promise<T> {
    return this.attempt(what, write, false);
  }

  /**
   * Something that has no write to repeat found no space (a script's start, its pid file): the
   * queue is DISK FULL from now, synchronously, so no start slips in, until `probe` succeeds.
   */
  waitForRoom(what: string, err: Error, probe: () => Promise<void>): void {
    this.enter(what, err);
    this.attempt(what, probe, true).catch(() => undefined);
  }

  private async attempt<T>(what: string, write: () => Promise<T>, entered: boolean): Promise<T> {
    const waits = new Doubling({ baseMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS });
    let held = entered;
    try {
      for (;;) {
        if (held) {
          await this.sleep(waits.next());
        }
        try {
          return await write();
        } catch (err) {
          if (this.closed || !isNoSpace(err)) throw err;
          if (!held) {
            held = true;
            this.enter(what, err as Error);
          }
        }
      }
    } finally {
      if (held) this.leave(what);
    }
  }

  /** The queue stops: waiting writes try once more, then give up (their messages stay in run/ for the next start). */
  close(): void {
    this.closed = true;
    for (const wake of this.sleepers) wake();
  }

  private sleep(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }

  private enter(what: string, err: Error): void {
    this.waiting += 1;
    // The kernel's words (ENOSPC: no space left on device, write), not the wrapper's, which repeats `what`.
    const cause = noSpaceCause(err)?.message;
    this.why = `${what}: ${typeof cause === 'string' ? cause : err.message}`;
    this.log?.warn({ what, err: err.message, waiting: this.waiting }, 'DISK FULL: write retried until there is space; no script starts meanwhile');
    if (this.waiting === 1) this.changed();
  }

  private leave(what: string): void {
    this.waiting -= 1;
    this.log?.info({ what, waiting: this.waiting }, 'write that waited for space done');
    if (this.waiting === 0) {
      this.log?.warn('DISK FULL cleared: dispatch resumes');
      this.changed();
    }
  }
}

/** Bytes the probe writes: one page, which a full filesystem cannot give (an overwrite in place could). */
const PROBE_BYTES = 4096;

/** Whether there is room again: a new file of one page in the queue's directory, removed at once. */
export function roomProbe(spool: Pick<QueueSpool, 'fs' | 'paths'>): () => Promise<void> {
  const file = path.join(spool.paths.dir, '.disk-probe');
  return async () => {
    const fh = await spool.fs.open(file, 'w', 0o600);
    try {
      await fh.writeFile(Buffer.alloc(PROBE_BYTES));
      await fh.datasync();
    } finally {
      await fh.close();
      await spool.fs.unlink(file).catch(() => undefined);
    }
  };
}

/** The spool writes that end a run (status, msg, the move out of run/), as the transitions module (transitions/run-moves.ts) uses them. */
export type RunEndSpool = Pick<QueueSpool, 'msgDir' | 'writeStatus' | 'writeMessage' | 'removePid' | 'beginMove' | 'remove' | 'move'>;

/**
 * The spool as the end of a run sees it: each write waits for space instead of failing. A move
 * either fails before its rename or has happened (QueueSpool.beginMove), so repeating it is safe.
 */
export function spaceWaitingSpool(spool: QueueSpool, disk: DiskFull): RunEndSpool {
  const beginMove: QueueSpool['beginMove'] = async (id, from, to, note) => {
    const moved = await disk.retry(`move ${id} to ${to}`, () => spool.beginMove(id, from, to, note));
    return { dir: moved.dir, sync: () => disk.retry(`sync of ${id} in ${to}`, moved.sync) };
  };
  return {
    msgDir: (state, id) => spool.msgDir(state, id),
    writeStatus: (dir, text, durable) => disk.retry(`status of ${dir}`, () => spool.writeStatus(dir, text, durable)),
    writeMessage: (state, id, msg) => disk.retry(`msg of ${id}`, () => spool.writeMessage(state, id, msg)),
    removePid: (dir) => disk.retry(`pid of ${dir}`, () => spool.removePid(dir)),
    remove: (state, id) => disk.retry(`removal of ${id}`, () => spool.remove(state, id)),
    beginMove,
    move: async (id, from, to, note) => {
      const moved = await beginMove(id, from, to, note);
      if (note.durable !== false) await moved.sync();
      return moved.dir;
    },
  };
}
