// Administrative (config/<q>.down|.pause files) and operational (SCRIPTERROR) status of a queue.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { QueuePaths } from '../../config/paths.js';
import { DiskFull } from './disk-full.js';
import type { ResolvedScript } from '../launch/script-runner.js';

export type QueueStatus = 'UP' | 'PAUSE' | 'DOWN' | 'SCRIPTERROR' | 'DISK FULL';
export type AdminAction = 'UP' | 'DOWN' | 'PAUSE' | 'RESUME';

/** How the queue's script is found and its disk probed for room (a queue process passes it; rq-mgr, which only sets files, does not). */
export interface ScriptSource {
  resolve: () => ResolvedScript;
  /** The configured script's absolute path, whose directory is watched while SCRIPTERROR lasts. */
  target: () => string;
  log: Logger;
  /** How DISK FULL finds room again (disk-full.ts roomProbe). */
  roomProbe: () => Promise<void>;
}

/**
 * Reads the admin files on demand (two stats) and watches their directory, so a change made
 * by touch/rm is seen at once and wakes the dispatcher (fix of spec §16.9).
 */
export class AdminState {
  private admin: Exclude<QueueStatus, 'SCRIPTERROR'> = 'UP';
  private scriptError: string | null = null;
  /** Why scripts may not run at all until the queue restarts with another config (limits it cannot enforce). */
  private refusal: string | null = null;
  private watcher: fs.FSWatcher | null = null;
  private scriptWatcher: fs.FSWatcher | null = null;
  /** Writes refused for space (disk-full.ts): DISK FULL from the first until none waits and a probe has found room. */
  readonly disk: DiskFull;

  constructor(
    private readonly paths: QueuePaths,
    private readonly onChange: () => void,
    private readonly script?: ScriptSource,
  ) {
    this.admin = this.read();
    // Without a script source (rq-mgr, which writes no message) no write waits and room is taken as found.
    this.disk = new DiskFull(onChange, script?.roomProbe ?? (async () => undefined), script?.log);
  }

  private read(): Exclude<QueueStatus, 'SCRIPTERROR'> {
    return fs.existsSync(this.paths.downFile) ? 'DOWN' : fs.existsSync(this.paths.pauseFile) ? 'PAUSE' : 'UP';
  }

  /**
   * Re-reads the files. Whoever sees a change first (a command or the watch) reports it: a
   * command that refreshed silently would leave the later watch event with nothing to report,
   * and a resumed queue would not start its messages.
   */
  refresh(): Exclude<QueueStatus, 'SCRIPTERROR'> {
    const now = this.read();
    if (now !== this.admin) {
      this.admin = now;
      this.onChange();
    }
    return this.admin;
  }

  /** Combined status: the operational one when it is not UP, else the admin one (spec §5.1); a full disk holds the queue first. */
  get status(): QueueStatus {
    return this.disk.full ? 'DISK FULL' : this.scriptError || this.refusal ? 'SCRIPTERROR' : this.admin;
  }

  /** Why the queue cannot run scripts (SCRIPTERROR: the script check or the exec refusal; DISK FULL: what found no room); null when it can. */
  get reason(): string | null {
    return this.disk.full ? this.disk.why : (this.scriptError ?? this.refusal);
  }

  /** Holds the queue in SCRIPTERROR while its config asks what this host cannot give (run limits); null lifts it (a fixed config). */
  refuseScripts(reason: string | null): void {
    if (reason === this.refusal) return;
    this.refusal = reason;
    this.onChange();
  }

  /**
   * Why a queued message does not start, for its status text, in rq's own states only (SCRIPTERROR,
   * DISK FULL): the classic PAUSE and DOWN keep the classic text. A fixed script is noticed first.
   */
  heldBecause(): string | null {
    this.recheckScript();
    const why = this.reason;
    if (why === null) return null;
    return `${this.disk.full ? 'queue disk full' : 'queue script error'}: ${why}`;
  }

  isDown(): boolean {
    return this.refresh() === 'DOWN';
  }

  watch(): void {
    const dir = path.dirname(this.paths.downFile);
    const names = new Set([path.basename(this.paths.downFile), path.basename(this.paths.pauseFile)]);
    this.watcher = fs.watch(dir, { persistent: false }, (_ev, file) => {
      if (!file || names.has(String(file))) this.refresh();
    });
    this.watcher.on('error', () => undefined);
  }

  close(): void {
    this.disk.close();
    this.watcher?.close();
    this.scriptWatcher?.close();
  }

  /**
   * The script as a start needs it; a failure sets SCRIPTERROR (the queue holds its messages)
   * until the script is usable again, which the watch on its directory notices at once.
   */
  resolveScript(): ResolvedScript {
    const s = this.script!.resolve();
    if (s.ok) this.scriptUsable();
    else this.scriptFailed(s.reason);
    return s;
  }

  /** Clears SCRIPTERROR when the script has become usable. Called by the watch and by status requests. */
  recheckScript(): void {
    if (this.scriptError && this.script!.resolve().ok) this.scriptUsable();
  }

  /**
   * Holds the queue in SCRIPTERROR: the check above failed, or the kernel refused to exec the script
   * (a deploy caught half-way). Observers hear of it like of any status change.
   */
  scriptFailed(reason: string): void {
    const was = this.scriptError;
    this.scriptError = reason;
    if (was !== reason) this.script!.log.error({ reason }, 'SCRIPTERROR');
    if (!was) this.onChange();
    if (this.scriptWatcher) return;
    let dir = path.dirname(this.script!.target());
    while (!fs.existsSync(dir)) dir = path.dirname(dir);
    try {
      this.scriptWatcher = fs.watch(dir, { persistent: false }, () => this.recheckScript());
      this.scriptWatcher.on('error', () => undefined);
    } catch (err) {
      this.script!.log.warn({ err, dir }, 'cannot watch the script directory; SCRIPTERROR clears at the next retry or status request');
    }
  }

  private scriptUsable(): void {
    if (!this.scriptError) return;
    this.script!.log.info('script usable again: SCRIPTERROR cleared');
    this.scriptError = null;
    this.scriptWatcher?.close();
    this.scriptWatcher = null;
    this.onChange();
  }

  /** Classic semantics: UP removes .down only; RESUME removes .pause only. */
  set(action: AdminAction): boolean {
    try {
      if (action === 'DOWN') fs.writeFileSync(this.paths.downFile, '', { mode: 0o644 });
      else if (action === 'PAUSE') fs.writeFileSync(this.paths.pauseFile, '', { mode: 0o644 });
      else fs.rmSync(action === 'UP' ? this.paths.downFile : this.paths.pauseFile, { force: true });
    } catch {
      return false;
    }
    this.refresh();
    return true;
  }
}
