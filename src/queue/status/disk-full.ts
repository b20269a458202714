// DISK FULL, a queue state: the writes that end a run wait for space (retried with backoff) instead of failing the run, and dispatch waits with them; for descriptors too.
import path from 'node:path';
import type { Logger } from 'pino';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { Doubling } from '../../backoff.js';

/** The first retry of a write that found no space, doubled after each failure up to MAX_RETRY_MS. */
export const FIRST_RETRY_MS = 100;
export const MAX_RETRY_MS = 5000;

const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);
/** The process (EMFILE) or the system (ENFILE) is out of file descriptors: scripts ending give theirs back. */
const NO_DESCRIPTOR = new Set(['EMFILE', 'ENFILE']);
/** A write short of descriptors is tried again after this long, doubled up to a second. */
const FD_RETRY_MS = 10;
const FD_MAX_RETRY_MS = 1000;

/** The error in `err`'s chain (the spool wraps errno errors in RQ_ERR_DISK) whose code is one of `codes`, if one is. */
function causeIn(err: unknown, codes: ReadonlySet<string>): { code?: unknown; cause?: unknown; message?: unknown } | null {
  for (let e = err as { code?: unknown; cause?: unknown; message?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && codes.has(e.code)) return e;
  }
  return null;
}

const noSpaceCause = (err: unknown) => causeIn(err, NO_SPACE);

/** Whether `err` (or what caused it) says the filesystem has no room. */
export function isNoSpace(err: unknown): boolean {
  return noSpaceCause(err) !== null;
}

/** Whether `err` (or what caused it) says the process or the system has no file descriptor to spare. */
export function isNoDescriptor(err: unknown): boolean {
  return causeIn(err, NO_DESCRIPTOR) !== null;
}

/**
 * DISK FULL: from the first write refused for want of space until a probe (`roomProbe`) has found
 * room, with no refusal since it began, and no write waits any more. Meanwhile no new script starts
 * (a run that could not be recorded would only add to what waits) and the admin state says so.
 * A waiting write that goes through is no evidence of room: it may have written into blocks its
 * file already had, or taken the one page another file gave back, which the next start would have
 * needed. So it only has the probe tried at once. `changed` is called when the state comes and
 * when it goes.
 */
export class DiskFull {
  /** Writes retrying for space now. */
  private waiting = 0;
  /** Space was refused and no probe has found room since. */
  private unproven = false;
  /** Refusals for want of space so far: a probe during which one came proves nothing. */
  private refusals = 0;
  private proving = false;
  /** Whether `changed` last said DISK FULL. */
  private shown = false;
  private closed = false;
  /** What found no room last, and the error: the reason clients are given while DISK FULL lasts. */
  why: string | null = null;
  private readonly sleepers = new Set<() => void>();
  /** Wakes the probe's wait, so it tries now (a waiting write went through). */
  private probeNow: (() => void) | null = null;

  constructor(
    private readonly changed: () => void,
    private readonly probe: () => Promise<void>,
    private readonly log?: Logger,
  ) {}

  get full(): boolean {
    return this.waiting > 0 || this.unproven;
  }

  /**
   * Runs `write` until it succeeds. A failure for want of space is tried again after 100 ms,
   * doubling to 5 s (a timer, no busy loop); one for want of a file descriptor after 10 ms, doubling
   * to 1 s, without DISK FULL (the run ended as its script said: the descriptors its neighbours hold
   * come back as they end); any other failure, or any failure once the queue is stopping, is thrown.
   * The write must be safe to repeat (each spool write used here is).
   */
  async retry<T>(what: string, write: () => Promise<T>): Promise<T> {
    const waits = new Doubling({ baseMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS });
    const fdWaits = new Doubling({ baseMs: FD_RETRY_MS, maxMs: FD_MAX_RETRY_MS });
    let held = false;
    try {
      for (;;) {
        if (held) await this.sleep(waits.next()).slept;
        try {
          return await write();
        } catch (err) {
          if (!this.closed && isNoDescriptor(err)) {
            if (fdWaits.peek() === FD_RETRY_MS)
              this.log?.warn({ what, err: (err as Error).message }, 'a write ending a run is short of file descriptors: tried again');
            await this.sleep(fdWaits.next()).slept;
            continue;
          }
          if (this.closed || !isNoSpace(err)) throw err;
          const first = !held;
          if (first) {
            held = true;
            this.waiting += 1;
          }
          this.refused(what, err as Error, first);
        }
      }
    } finally {
      if (held) {
        this.waiting -= 1;
        this.log?.info({ what, waiting: this.waiting }, 'write that waited for space done');
        this.probeNow?.();
        this.settle();
      }
    }
  }

  /**
   * Something that has no write to repeat found no space (a script's start, its pid file): the
   * queue is DISK FULL from now, synchronously, so no start slips in, until the probe finds room.
   */
  waitForRoom(what: string, err: Error): void {
    this.refused(what, err, true);
  }

  /**
   * A write that is not repeated (a create, a status line) failed: when for want of
   * space, that is evidence of a full disk like any other, so DISK FULL holds (said in the log only
   * when it comes) until the probe finds room. Returns `err`, for the caller to throw on.
   */
  noted(what: string, err: unknown): unknown {
    if (isNoSpace(err)) this.refused(what, err as Error, !this.shown);
    return err;
  }

  /** The queue stops: waiting writes try once more, then give up (their messages stay in run/ for the next start). */
  close(): void {
    this.closed = true;
    for (const wake of this.sleepers) wake();
  }

  private sleep(ms: number): { slept: Promise<void>; wake: () => void } {
    let wake = () => undefined as void;
    const slept = this.closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          wake = () => {
            clearTimeout(timer);
            this.sleepers.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, ms);
          this.sleepers.add(wake);
        });
    return { slept, wake };
  }

  /** Space was refused to `what`: DISK FULL holds (said once, when it comes) and the probe looks for room. */
  private refused(what: string, err: Error, say: boolean): void {
    this.refusals += 1;
    this.unproven = true;
    // The kernel's words (ENOSPC: no space left on device, write), not the wrapper's, which repeats `what`.
    const cause = noSpaceCause(err)?.message;
    this.why = `${what}: ${typeof cause === 'string' ? cause : err.message}`;
    if (say) this.log?.warn({ what, err: err.message, waiting: this.waiting }, 'DISK FULL: write retried until there is space; no script starts meanwhile');
    void this.proveRoom();
    if (!this.shown) {
      this.shown = true;
      this.changed();
    }
  }

  /** Probes for room after 100 ms doubling to 5 s (or at once when a waiting write goes through) until one finds it. */
  private async proveRoom(): Promise<void> {
    if (this.proving) return;
    this.proving = true;
    const waits = new Doubling({ baseMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS });
    try {
      while (this.unproven && !this.closed) {
        const nap = this.sleep(waits.next());
        this.probeNow = nap.wake;
        await nap.slept;
        this.probeNow = null;
        if (this.closed) return;
        const seen = this.refusals;
        try {
          await this.probe();
        } catch (err) {
          if (isNoSpace(err)) continue;
          // Not a want of space (EIO, EACCES): the probe cannot tell, so the waiting writes decide, as they would without it.
          this.log?.warn({ err: (err as Error).message }, 'DISK FULL: the probe for room failed for another reason; the waiting writes alone hold the state');
        }
        if (this.refusals === seen) this.unproven = false;
      }
    } finally {
      this.proving = false;
      this.probeNow = null;
    }
    this.settle();
  }

  /** Says the state is gone once no write waits and the probe has found room. */
  private settle(): void {
    if (!this.shown || this.full || this.closed) return;
    this.shown = false;
    this.log?.warn('DISK FULL cleared: a probe found room; dispatch resumes');
    this.changed();
  }
}

/**
 * Bytes the probe writes: 16 pages. One page proves only that one came free (a pid file removed at
 * a run's end gives one back), which the next start's first write would take; a start and the end
 * of a run take a page for each file they put bytes in (stdio.log, history, pid, status, msg).
 */
const PROBE_BYTES = 64 * 1024;

/** Whether there is room again: a new file of PROBE_BYTES in the queue's directory, removed at once. */
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
