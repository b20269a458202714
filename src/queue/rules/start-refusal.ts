// Starts that did not happen: which failures return a message to que untouched, and when dispatch tries again.
import fs from 'node:fs';
import type { Logger } from 'pino';
import { Doubling } from '../../backoff.js';

/**
 * A start that failed before the script ran. `script`: the file cannot be executed now (missing,
 * not executable, a bad `#!` line, still open for writing): the queue holds in SCRIPTERROR.
 * `resource`: the queue process or the system is out of fds, processes or memory: dispatch backs
 * off. Either way the message goes back to que as it was: a deploy caught half-way or a load
 * peak is not the message's failure, so it must not cost an attempt or land in err.
 */
export interface Refusal {
  kind: 'script' | 'resource';
  /** The errno name (EACCES, EMFILE…). */
  code: string;
  text: string;
}

// ENOEXEC (a `#!` naming no interpreter) and ETXTBSY (the file still being written) are what a deploy looks like mid-way.
const SCRIPT_CODES = new Set(['EACCES', 'ENOENT', 'ENOEXEC', 'ETXTBSY', 'ENOTDIR', 'ELOOP']);
const RESOURCE_CODES = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM']);

/** The refusal a start failing with errno name `code` amounts to; null for a failure of the message's own (a NUL byte in a param). */
export function refusalOf(code: string | undefined, text: string): Refusal | null {
  if (code && SCRIPT_CODES.has(code)) return { kind: 'script', code, text };
  if (code && RESOURCE_CODES.has(code)) return { kind: 'resource', code, text };
  return null;
}

/** The refusal a launcher's report of a process it could not start amounts to, if any. */
export function startRefusal(exit: { spawnError?: string; spawnCode?: string }): Refusal | null {
  return exit.spawnError === undefined ? null : refusalOf(exit.spawnCode, `could not start script: ${exit.spawnError}`);
}

/** What an interpreter exits with when it cannot open its script: dash, python and perl 2, bash 126 and 127. */
const CANNOT_OPEN_CODES = new Set([2, 126, 127]);

/** An interpreter that cannot open its script fails before running a line of it: a run longer than this ran. */
export const VANISHED_WITHIN_MS = 2000;

/**
 * A start the kernel did but the interpreter could not: a `#!` script is opened by path twice, by
 * the exec and again by its interpreter, and a deploy renaming, deleting or replacing it between
 * the two makes the interpreter fail at once (seen in CI: one message in err). Told apart from a
 * script that failed by itself: an interpreter's exit code soon after the start, not a word on
 * fd 3, and the path no longer naming the file the start resolved. The message goes back to que
 * like any refused start; a run that ended later or said anything stays the script's own failure.
 */
export function vanishedStart(
  exit: { code: number | null; signal: string | null },
  run: { saidAnything: boolean; ranMs: number },
  script: { path: string; dev: number; ino: number },
): Refusal | null {
  if (run.saidAnything || run.ranMs >= VANISHED_WITHIN_MS) return null;
  if (exit.signal !== null || exit.code === null || !CANNOT_OPEN_CODES.has(exit.code)) return null;
  const now = fs.statSync(script.path, { throwIfNoEntry: false });
  if (now && now.dev === script.dev && now.ino === script.ino) return null;
  const what = now ? 'replaced' : 'renamed away or deleted';
  return { kind: 'script', code: 'ENOENT', text: `script ${script.path} was ${what} as it started (exit ${exit.code} before any line on fd 3)` };
}

/** The errno name a thrown error carries, if any. */
export function errnoCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as NodeJS.ErrnoException).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Free fds a start must leave: a run's end (status, msg, history, directory syncs), the socket's
 * accepts and creates need a few each; a start that took the last ones would make them fail
 * instead, stranding finished messages in run/.
 */
export const HEADROOM_FDS = 32;

/** What a running script holds in the queue process (its fds 3/4 and a pidfd). */
const FDS_PER_START = 3;
/**
 * What a run's end holds at once (a status file, a directory sync), kept free for every running
 * script: scripts started together end together, and 64 ends at once outran a flat headroom.
 */
const FDS_PER_END = 2;
/** Starts one probe vouches for: it opens room for them all plus the headroom, so most starts probe nothing. */
const STARTS_PER_PROBE = 16;

/** Retry delays: the first after a refusal, doubled per refusal in a row up to the cap; a start that works resets it. */
export const RETRY_MS = { base: 2000, cap: 8000 };

/** A resource refusal this long after the previous one starts a new episode (and a new warning). */
export const EPISODE_GAP_MS = 60_000;

export interface StartGuardDeps {
  /** SCRIPTERROR is held there; a retry re-checks the script, which clears it when usable. */
  admin: { scriptFailed(reason: string): void; recheckScript(): void; readonly status: string };
  log: Logger;
  /** Dispatch again (a retry is due). */
  pump: () => void;
  /** How many runs are under way (their ends will need fds). */
  running: () => number;
  retryMs?: { base: number; cap: number };
  now?: () => number;
}

/** Holds dispatch after a refused start and retries it on a timer with backoff, never in a busy loop. */
export class StartGuard {
  private held = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly waits: Doubling;
  /** When the last resource refusal was: a run of them is one episode, warned of once, not once per message. */
  private starvedAt = -Infinity;
  private closed = false;
  /** Starts the last probe left room for (ends only free fds, so it stays true until a refusal). */
  private credit = 0;
  /** A probe is due after the current turn of the event loop. */
  private probing = false;

  constructor(private readonly d: StartGuardDeps) {
    const retry = d.retryMs ?? RETRY_MS;
    this.waits = new Doubling({ baseMs: retry.base, maxMs: retry.cap });
  }

  private get retry(): { base: number; cap: number } {
    return this.d.retryMs ?? RETRY_MS;
  }

  /** False while a resource refusal waits for its retry (a script exiting or the timer). */
  canStart(): boolean {
    return !this.held;
  }

  /**
   * Null when a start would leave HEADROOM_FDS fds free besides FDS_PER_END per run under way, else
   * the refusal. A probe opens and closes fds of /dev/null (3.5 µs a pair here); with room for
   * STARTS_PER_PROBE starts it vouches for that many, so a start only spends a credit: the next
   * probe is made after a start, off its path (see started), and here only when none was.
   */
  headroom(): Refusal | null {
    if (this.credit > 0) {
      this.credit--;
      return null;
    }
    const r = this.probe();
    if (this.credit > 0) this.credit--;
    return r;
  }

  /** Opens room for STARTS_PER_PROBE starts; the credit is theirs when it is there, and a refusal when not even one fits. */
  private probe(): Refusal | null {
    // Free after a start: the headroom, and what every run under way (that one too) needs to end.
    const need = HEADROOM_FDS + FDS_PER_END * this.d.running() + FDS_PER_START + FDS_PER_END;
    const fds: number[] = [];
    let failure: unknown = null;
    try {
      while (fds.length < need + (FDS_PER_START + FDS_PER_END) * (STARTS_PER_PROBE - 1)) fds.push(fs.openSync('/dev/null', 'r'));
    } catch (err) {
      failure = err;
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
    if (!failure) this.credit = STARTS_PER_PROBE;
    if (!failure || fds.length >= need) return null;
    const refusal = refusalOf(errnoCode(failure), `too few free file descriptors to start another script (${(failure as Error).message})`);
    if (!refusal) throw failure;
    return refusal;
  }

  refused(r: Refusal): void {
    this.credit = 0;
    if (r.kind === 'script') {
      this.d.admin.scriptFailed(r.text);
    } else {
      this.held = true;
      const now = (this.d.now ?? Date.now)();
      if (now - this.starvedAt > EPISODE_GAP_MS)
        this.d.log.warn({ code: r.code, reason: r.text }, 'cannot start scripts for want of resources; messages wait in que and start as runs end');
      this.starvedAt = now;
    }
    this.arm();
  }

  /** A script started: the next refusal retries after the base delay again. */
  started(): void {
    this.waits.reset();
    if (this.credit > 0 || this.probing || this.closed) return;
    // The credit is spent: the next start finds a fresh one, probed once this start's turn is over.
    this.probing = true;
    setImmediate(() => {
      this.probing = false;
      if (this.credit > 0 || this.closed) return;
      try {
        this.probe();
      } catch {
        // A start probes again itself, and says what failed.
      }
    });
  }

  /** A script exited: its fds and process are free, so a held start may try at once (the run's end pumps). */
  ended(): void {
    this.held = false;
  }

  private arm(): void {
    if (this.timer || this.closed) return;
    const delay = this.waits.next();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.held = false;
      this.d.admin.recheckScript();
      // Still unusable: look again later (the watch on its directory may see nothing, e.g. after a symlink swap).
      if (this.d.admin.status === 'SCRIPTERROR') this.arm();
      this.d.pump();
    }, delay);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
