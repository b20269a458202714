// scandir/: symlinks to directories with an executable `run` become queues; removing one disables it.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import { queuePaths, rootPaths } from '../config/paths.js';
import { normaliseQueueConfig } from '../config/queue-config.js';
import { queueNameRoom } from '../config/socket-paths.js';
import { DirSync, writeFileDurable } from '../spool/durable.js';
import { discoverQueues, isScandirQueue } from './queue-dirs.js';
import { isRqError } from '../errors.js';
import { inspectEntry } from './scandir-entry.js';
import type { Supervisor } from './supervisor.js';
import type { RefusedEntry } from '../ipc/mgr-client.js';

/** How long a config change waits for a queue process still starting to serve before starting it again instead. */
const READY_WAIT_MS = 10_000;

type Candidate = { name: string; target: string; config: Record<string, unknown> } | { name: string; badConfig: string };
/** Why an entry is no queue and how to fix it; `config`: its link is fine but its config.json is not, and the queue was left as it was (`kept`) or is not made. */
type Refusal = { reason: string; fix: string; config: false | 'kept' | 'not made' };

/**
 * Watches scandir/ (and, through the links, each linked directory) and reconciles on every
 * event: no periodic scan. Reconciliations never overlap; a burst of events costs one more pass.
 */
export class ScanDir {
  private watcher: FSWatcher | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  /** Queues kept though their run is unusable, so that is logged once, not on every pass. */
  private readonly holding = new Set<string>();
  /** Each entry that cannot become a queue, with the reason last logged: told once, again only when the reason changes. */
  private readonly told = new Map<string, string>();
  /** The entries the last pass refused, for clients to ask (`refused_queues`): a send to one says why it is no queue. */
  private refused = new Map<string, Refusal>();

  constructor(
    private readonly sup: Supervisor,
    private readonly log: Logger,
  ) {}

  private get dir(): string {
    return rootPaths(this.sup.root).scandir;
  }

  async start(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    // depth 1 with followSymlinks: events for scandir/<q> and for the files inside the linked dir
    // (run, config.json); raw events also carry chmod, which chokidar's own events skip.
    this.watcher = watch(this.dir, { followSymlinks: true, depth: 1, ignoreInitial: true, ignorePermissionErrors: true });
    this.watcher.on('all', () => this.kick());
    this.watcher.on('raw', () => this.kick());
    this.watcher.on('error', (err) => this.log.warn({ err: String(err) }, 'scandir watch error'));
    await new Promise<void>((r) => this.watcher!.once('ready', () => r()));
    await this.kick();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.watcher?.close();
    await this.running;
  }

  /** Requests a reconciliation; resolves when one that started after this call has finished. */
  kick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.reconcile().catch((err) => this.log.error({ err: (err as Error).message }, 'scandir pass failed'));
      } while (this.again && !this.closed);
    })().finally(() => (this.running = null));
    return this.running;
  }

  private async candidates(): Promise<Map<string, Candidate>> {
    const out = new Map<string, Candidate>();
    const refused = new Map<string, Refusal>();
    const room = queueNameRoom(this.sup.root);
    for (const name of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      const entry = await inspectEntry(this.dir, name, room);
      if (entry.kind === 'refused') refused.set(name, { reason: entry.reason, fix: entry.fix, config: false });
      if (entry.kind !== 'queue') continue;
      // The run can go between the look and its realpath: the next event brings another pass.
      const c = await this.buildConfig(name, entry.target, entry.run).catch(() => null);
      if (c && 'badConfig' in c) {
        // A queue made before keeps running on its last good config; a new one is not made at all.
        const made = fs.existsSync(queuePaths(this.sup.root, name).dir);
        refused.set(name, {
          reason: c.badConfig,
          fix: `correct ${path.join(entry.target, 'config.json')} (a JSON object of queue settings); ${made ? 'the queue keeps its last config meanwhile' : 'the queue is made once it is'}`,
          config: made ? 'kept' : 'not made',
        });
      }
      if (c) out.set(name, c);
    }
    this.tell(refused);
    this.refused = refused;
    return out;
  }

  /** The entries the last pass refused, by name, with the reason and the fix. */
  refusals(): RefusedEntry[] {
    return [...this.refused].map(([entry, r]) => ({ entry, reason: r.reason, fix: r.fix, ...(r.config ? { config: true } : {}) }));
  }

  /**
   * Logs each refused entry once with its reason: a rescan runs on every event in scandir/ and in
   * the linked directories, and repeating the same line on each would bury it. An entry fixed or
   * removed is forgotten, so going wrong again is told again.
   */
  private tell(refused: Map<string, Refusal>): void {
    for (const [name, { reason, fix, config }] of refused) {
      if (this.told.get(name) === reason) continue;
      this.told.set(name, reason);
      if (config === 'kept') this.log.error({ queue: name, reason, fix }, 'bad config.json in scandir link; queue left as it was');
      else if (config) this.log.error({ queue: name, reason, fix }, 'bad config.json in scandir link; queue not made');
      else this.log.warn({ entry: name, reason, fix }, 'scandir entry cannot become a queue');
    }
    for (const name of [...this.told.keys()]) if (!refused.has(name)) this.told.delete(name);
  }

  /** Spec §6.5: the linked config.json overlaid with name, script = realpath(run), defaults. */
  private async buildConfig(name: string, target: string, run: string): Promise<Candidate> {
    const file = path.join(target, 'config.json');
    let overlay: Record<string, unknown> = {};
    try {
      const text = await fsp.readFile(file, 'utf8');
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { name, badConfig: `${file}: expected a JSON object` };
      overlay = parsed as Record<string, unknown>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return { name, badConfig: `${file}: ${(err as Error).message}` };
    }
    const raw = { num_workers: 1, exec_prefix: '', ...overlay, name, script: await fsp.realpath(run) };
    try {
      return { name, target, config: normaliseQueueConfig(raw, file) as unknown as Record<string, unknown> };
    } catch (err) {
      return { name, badConfig: (err as Error).message };
    }
  }

  private async reconcile(): Promise<void> {
    const want = await this.candidates();
    for (const c of want.values()) if (!('badConfig' in c)) await this.ensure(c);
    // Only queues that scandir made (marker file) are ever disabled by scandir.
    for (const name of await discoverQueues(this.sup.root)) {
      if (want.has(name) || !(await isScandirQueue(this.sup.root, name))) continue;
      if (await this.linkInPlace(name)) continue;
      this.log.info({ queue: name }, 'scandir link gone: disabling queue');
      // A queue rq-mgr does not run (stopped in ERROR before a restart of rq-mgr) has nothing to stop: refused, and left be.
      await this.sup.deleteQueue(name).catch((err: unknown) => {
        if (!isRqError(err, 'RQ_ERR_MGR_NO_SUCH_QUEUE')) throw err;
      });
      await this.sup.settled(name);
    }
  }

  /**
   * A queue whose link is still there is kept though its `run` is missing or not executable, or the
   * link dangles: that is a deploy half-way (chmod -x, a swapped symlink), which the queue rides out
   * in SCRIPTERROR with its messages in que. Trashing it would take them all away.
   */
  private async linkInPlace(name: string): Promise<boolean> {
    const kept = await fsp.lstat(path.join(this.dir, name)).then(
      (st) => st.isSymbolicLink(),
      () => false,
    );
    if (kept && !this.holding.has(name))
      this.log.warn({ queue: name }, 'scandir link in place but its run is not usable: queue kept (SCRIPTERROR until run is fixed)');
    if (kept) this.holding.add(name);
    else this.holding.delete(name);
    return kept;
  }

  private async ensure(c: { name: string; target: string; config: Record<string, unknown> }): Promise<void> {
    this.holding.delete(c.name);
    const p = queuePaths(this.sup.root, c.name);
    const text = JSON.stringify(c.config);
    if (!fs.existsSync(p.dir)) {
      try {
        await this.sup.createQueue(c.config, { scandirTarget: c.target });
      } catch (err) {
        if (!isRqError(err)) throw err;
        // The supervisor logs why a queue was not made when it is its own fault; a refusal is said here, with where it came from.
        this.log.info({ queue: c.name, reason: err.message, code: err.code }, 'scandir queue not created');
        return;
      }
      // The supervisor logs the creation at info: this line only adds where it came from.
      this.log.debug({ queue: c.name }, 'scandir created queue');
    } else {
      const current = await fsp.readFile(p.configFile, 'utf8').catch(() => '');
      if (current !== text) {
        await writeFileDurable(p.configFile, text, new DirSync());
        // A running queue reads it again (HUP), as `rq-mgr reload` makes it: its runs go on, where a restart
        // (what the classic daemon did) would stop them and run their messages again from the start. A process
        // still starting is waited for (a HUP before its handler would end it); one not running (stopped after
        // failing to start), or not serving in time, is started again on the new config.
        const worker = this.sup.workers.get(c.name);
        if (worker && worker.pid !== null && !worker.ready) await Promise.race([worker.settled(), sleep(READY_WAIT_MS, undefined, { ref: false })]);
        const live = worker !== undefined && worker.pid !== null && worker.ready;
        this.log.info({ queue: c.name }, live ? 'scandir config changed: queue reloads it' : 'scandir config changed: starting queue');
        if (live) worker.signal('SIGHUP');
        else if (worker) await this.sup.restartQueue(c.name);
        else this.sup.startQueue(c.name);
      } else if (!this.sup.workers.has(c.name)) {
        this.sup.startQueue(c.name);
      }
    }
    await this.linkForm(c.name, c.target);
  }

  /** queues/<q>/form.json -> <link target>/form.json (absolute, so it does not depend on depth). */
  private async linkForm(name: string, target: string): Promise<void> {
    const form = queuePaths(this.sup.root, name).formFile;
    const want = path.join(target, 'form.json');
    const have = await fsp.readlink(form).catch(() => null);
    if (have === want) return;
    await fsp.rm(form, { force: true });
    await fsp.symlink(want, form);
  }
}
