// Watches timers/ (chokidar, following symlinks) and turns its entries into timer definitions or refusals.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from 'pino';
import { isErrno } from '../errors.js';
import { type TimerConfig, loadTimerConfig, timerNameOf } from '../config/timer-config.js';
import { configFieldError } from '../config/schema-error.js';
import { isFleetDest } from '../message/fleet-dest.js';
import { isValidQueueName } from '../message/names.js';
import type { TimerRefusal } from '../ipc/timers-client.js';
import { entryExists } from '../path-exists.js';
import type { TimerStats, TimerTable } from './timer-table.js';
import { TargetWatch } from './target-watch.js';

export interface TimerDirDeps {
  /** The timers/ directory. */
  dir: string;
  table: TimerTable;
  stats: TimerStats;
  /** Periods below 60 s (only when RQ_ENV=test). */
  allowShortPeriod: boolean;
  log: Logger;
  /**
   * Quiet time after an event before the file is read, so an editor's truncate-then-write
   * is read once, whole, rather than refused half-written.
   */
  settleMs?: number;
}

const DEFAULT_SETTLE_MS = 25;

/** Why a .json or .yaml entry whose name is no timer's is not read. */
const misnamed = (label: string) => `${label}: ignored: a timer file is named <name>.json or <name>.yaml with exactly one dot`;

/** The fixes rq doctor gives: a misnamed file is read by no one, so its content is not what is wrong. */
const FIX_CONTENT = 'correct it (or the file it links to), or remove it: rq-timers reads it again at once';
const FIX_NAME = 'rename it to <name>.json or <name>.yaml (one dot), or remove it';

/** A destination the timers process can deliver to: a local queue name, or an http(s) URL or a pool (via relay, which checks the pool). */
function checkDest(config: TimerConfig, label: string): void {
  const dest = config.msg.dest;
  if (!/^https?:\/\//i.test(dest) && !isFleetDest(dest) && !isValidQueueName(dest)) {
    throw configFieldError(label, 'msg.dest', 'a local queue name, an http(s):// URL or fleet:<queue>', dest);
  }
}

export class TimerDir {
  private watcher: FSWatcher | null = null;
  private readonly settling = new Map<string, NodeJS.Timeout>();
  /** Per entry: the load running now; a second request while it runs sets `again`. */
  private readonly loading = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Per entry: the refusal last counted, so repeated events for one bad file count it once. */
  private readonly refused = new Map<string, string>();
  private readonly warned = new Set<string>();
  private closed = false;
  private readonly targets: TargetWatch;

  constructor(private readonly deps: TimerDirDeps) {
    this.targets = new TargetWatch((link) => this.touched(path.basename(link)), deps.log);
  }

  /** Starts watching, then reads every entry once. Resolves when the first scan is loaded. */
  async start(): Promise<void> {
    const { dir, log } = this.deps;
    const watcher = watch(dir, {
      // Without it an edit of the link's target would go unseen; with it chokidar watches each target.
      followSymlinks: true,
      depth: 0,
      ignoreInitial: true,
      ignored: (p: string) => p !== dir && timerNameOf(path.basename(p)) === null,
    });
    this.watcher = watcher;
    watcher.on('all', (_event: string, p: string) => this.touched(path.basename(p)));
    // chokidar reports nothing for a link whose target is missing; the directory's raw events
    // still name it, so such a link is refused with a reason instead of being silently skipped.
    watcher.on('raw', (_event, file, details) => {
      const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
      if (file && watched === dir) this.touched(path.basename(file));
    });
    watcher.on('error', (err: unknown) => log.error({ err }, 'timers/ watch error'));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    await this.rescan();
  }

  /** Reads every entry of timers/ and forgets timers whose link has gone (also run on SIGHUP). */
  async rescan(): Promise<void> {
    let files: string[];
    try {
      files = await fsp.readdir(this.deps.dir);
    } catch (err) {
      this.deps.log.error({ err, dir: this.deps.dir }, 'cannot list timers/');
      return;
    }
    const present = new Set(files);
    const gone = this.deps.table.files().filter((f) => !present.has(f));
    for (const f of [...this.refused.keys()]) if (!present.has(f)) this.refused.delete(f);
    for (const f of [...this.warned]) if (!present.has(f)) this.warned.delete(f);
    await Promise.all([...files, ...gone].map((f) => this.load(f)));
  }

  /** The entries of timers/ that define no timer, each with why and the fix, in name order: what `rq doctor` lists. */
  refusals(): TimerRefusal[] {
    // The reasons name their file first, for the log; the file is a field of its own here.
    const bare = (file: string, reason: string, fix: string) => ({
      file,
      reason: reason.startsWith(`timers/${file}: `) ? reason.slice(`timers/${file}: `.length) : reason,
      fix,
    });
    const all = [...this.refused].map(([file, reason]) => bare(file, reason, FIX_CONTENT));
    for (const file of this.warned) all.push(bare(file, misnamed(`timers/${file}`), FIX_NAME));
    return all.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.settling.values()) clearTimeout(t);
    this.settling.clear();
    await this.watcher?.close();
    await Promise.all(this.loading.values());
    this.targets.close();
  }

  private touched(file: string): void {
    if (this.closed) return;
    const old = this.settling.get(file);
    if (old) clearTimeout(old);
    this.settling.set(
      file,
      setTimeout(() => {
        this.settling.delete(file);
        void this.load(file);
      }, this.deps.settleMs ?? DEFAULT_SETTLE_MS),
    );
  }

  /** Loads one entry; loads of the same entry never overlap, and a request during one reruns it after. */
  private load(file: string): Promise<void> {
    const running = this.loading.get(file);
    if (running) {
      this.again.add(file);
      return running;
    }
    const p = (async () => {
      do {
        this.again.delete(file);
        try {
          await this.loadOnce(file);
        } catch (err) {
          this.deps.log.error({ err, file }, 'timer file could not be handled');
        }
      } while (this.again.has(file) && !this.closed);
    })().finally(() => this.loading.delete(file));
    this.loading.set(file, p);
    return p;
  }

  private async loadOnce(file: string): Promise<void> {
    const { dir, table } = this.deps;
    const name = timerNameOf(file);
    const label = `timers/${file}`;
    const full = path.join(dir, file);
    if (name === null) {
      if (!/\.(json|yaml)$/.test(file)) return;
      // Removed, it is forgotten: rq doctor lists it no more.
      if (!(await entryExists(full))) this.warned.delete(file);
      else if (!this.warned.has(file)) {
        this.warned.add(file);
        this.deps.log.warn({ file: label }, misnamed(label));
      }
      return;
    }
    let isLink: boolean;
    try {
      isLink = (await fsp.lstat(full)).isSymbolicLink();
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      this.targets.untrack(full);
      this.gone(name, file);
      return;
    }
    if (isLink && !this.closed) await this.targets.track(full);
    else this.targets.untrack(full);
    if (!isLink) {
      this.refuse(name, file, `${label}: not a symlink; a timer is a symlink to its definition file (ln -s /path/to/${file} ${label})`);
      return;
    }
    const holder = table.fileOf(name);
    if (holder !== null && holder !== file) {
      this.refuse(name, file, `${label}: timer "${name}" is already defined by timers/${holder}; remove one of them`);
      return;
    }
    let config: TimerConfig;
    try {
      config = await loadTimerConfig(full, { allowShortPeriod: this.deps.allowShortPeriod }, label);
      checkDest(config, label);
    } catch (err) {
      this.refuse(name, file, err instanceof Error ? err.message : String(err));
      return;
    }
    this.refused.delete(file);
    table.define(name, file, config);
  }

  private refuse(name: string, file: string, message: string): void {
    if (this.refused.get(file) !== message) {
      this.refused.set(file, message);
      this.deps.stats.invalid++;
      this.deps.log.warn({ file: `timers/${file}`, error: message }, 'timer file refused');
    }
    if (this.deps.table.fileOf(name) === file) this.deps.table.suspend(name);
  }

  private gone(name: string, file: string): void {
    this.refused.delete(file);
    this.warned.delete(file);
    if (this.deps.table.fileOf(name) !== file) return;
    this.deps.table.remove(name);
    // The same name under the other extension may have been refused only because this one held it.
    const other = `${name}.${file.endsWith('.json') ? 'yaml' : 'json'}`;
    if (this.refused.has(other)) void this.load(other);
  }
}
