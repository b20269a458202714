// rq-mgr's state: one worker per queue plus web and timers, queue creation, deletion and admin files.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { queuePaths, rootPaths } from '../config/paths.js';
import { queueNameFitProblem, queueNameRoom } from '../config/socket-paths.js';
import { RqError } from '../errors.js';
import { isValidQueueName } from '../message/names.js';
import { PACKAGE_DIR } from '../config/root.js';
import { normaliseQueueConfig } from '../config/queue-config.js';
import { AdminState, type AdminAction } from '../queue/status/admin-state.js';
import { type QueueMemory, notInheritedArgs, queueEnv, queueNodeFlags } from '../queue/node-flags.js';
import { type CreateQueueOptions, createQueueDir, discoverQueues, trashQueueDir } from './queue-dirs.js';
import { DEFAULT_POLICY, Worker, type WorkerPolicy, type WorkerProblem, type WorkerStatus } from './worker.js';

/** How long the web may say nothing after it serves (it says it every HEARTBEAT_MS) before rq-mgr takes it as stuck. */
export const WEB_SILENT_MS = 20_000;

export interface SupervisorDeps {
  root: string;
  log: Logger;
  env: NodeJS.ProcessEnv;
  policy?: WorkerPolicy;
  /** Directory holding the compiled programs (dist/). */
  distDir?: string;
  /** A queue process ended (limits: its slots are orphaned, or freed); `restarting` unless stopped or in ERROR. */
  queueExited?: (name: string, how: 'restarting' | 'stopped' | 'abandoned') => void;
  /** A queue process says it serves (its socket listens): the fleet reads its figures from then on. */
  queueServing?: (name: string) => void;
  /** The web says it serves (its port listens), or its process ended: the fleet's way in to the queues. */
  webServing?: (serves: boolean) => void;
  /** The web's `shutdown_grace_s` in ms: its TERM → KILL waits that long, and a few seconds more to close. */
  webGraceMs?: number;
  /** `queue_memory` of config.json: the V8 flags every queue process starts with. */
  queueMemory?: QueueMemory;
}

type WorkerRow = {
  status: string;
  pid: number | null;
  uptime: number | null;
  last_exit: string | null;
  restarts: number;
  /** Its process said it serves; false while one just spawned starts (a client may wait for it). */
  ready: boolean;
  problem?: { reason: string; fix: string };
};

/** Who serves once a start has settled (`Supervisor.started`): rq-mgr's started line says it. */
export interface StartReport {
  serving: string[];
  notServing: { name: string; status: WorkerStatus; lastExit: string | null }[];
  /** null when the web is not built. */
  web: { ready: boolean; problem: WorkerProblem | null; status: WorkerStatus } | null;
}

/** What the web needs past its requests' grace to end its streams and close (before rq-mgr's KILL). */
const WEB_CLOSE_MS = 10_000;

export class Supervisor {
  readonly workers = new Map<string, Worker>();
  private web: Worker | null = null;
  private timers: Worker | null = null;
  readonly startedAt = Date.now();
  /** Deletes in progress: the queue process is stopping, then its dir moves to the trash. */
  private readonly deleting = new Map<string, Promise<void>>();
  private readonly dist: string;
  stopping = false;
  /** Queue directories not started because their names do not fit this root's socket paths, with why. */
  readonly unfit = new Map<string, string>();

  constructor(private readonly deps: SupervisorDeps) {
    this.dist = deps.distDir ?? path.join(PACKAGE_DIR, 'dist');
  }

  get root(): string {
    return this.deps.root;
  }

  /** Starts every queue found under queues/, then the web process if it is built (the timers: startTimers). */
  async start(): Promise<void> {
    const unfit = (queue: string, reason: string) => {
      this.unfit.set(queue, reason);
      this.deps.log.warn({ queue, reason }, 'queue not started: its name does not fit this root');
    };
    const found = await discoverQueues(this.root, unfit);
    // A stop that came while the root was read: nothing more is started.
    if (this.stopping) return;
    for (const name of found) this.startQueue(name);
    this.web = this.component('web', 'web/web-main.js');
  }

  /**
   * Starts the timers process if it is built: once the queues scandir links have been made too, since a timer
   * fires at start (the cleaner's does), and one for a queue not made yet would be a warning and a retry.
   */
  startTimers(): void {
    if (this.stopping || this.timers) return;
    this.timers = this.component('timers', 'timers/timers-main.js');
  }

  private component(name: 'web' | 'timers', file: string): Worker | null {
    const main = path.join(this.dist, file);
    if (!fs.existsSync(main)) {
      this.deps.log.info({ component: name }, 'not built yet; not started');
      return null;
    }
    const served = (serves: boolean) => (name === 'web' ? this.deps.webServing?.(serves) : undefined);
    // The web's loop never waits on a script: silent that long, it is stuck (or stopped), and is restarted.
    const policy = { ...(this.deps.policy ?? DEFAULT_POLICY), ...(name === 'web' ? { silentMs: WEB_SILENT_MS } : {}) };
    const w = new Worker(
      `[${name}]`,
      name,
      [main, '--root', this.root, '--watch-stdin'],
      this.deps.log,
      policy,
      this.deps.env,
      () => served(false),
      () => served(true),
    );
    w.start();
    return w;
  }

  startQueue(name: string): Worker {
    const existing = this.workers.get(name);
    if (existing && existing.status !== 'STOPPED' && existing.status !== 'ERROR') return existing;
    // Its slots are orphaned until a next process has killed what this one left (a crash, or a stop
    // that needed KILL); freed at once after a clean stop; a queue gone for good (ERROR, deleted)
    // is abandoned: rq-mgr kills its leftovers itself.
    const exited = (status: WorkerStatus, forced: boolean) => {
      const current = this.workers.get(name) === w;
      this.deps.queueExited?.(name, status === 'BACKOFF' || (forced && current) ? 'restarting' : status === 'STOPPED' && current ? 'stopped' : 'abandoned');
    };
    const { env, notInherited } = queueEnv(this.deps.env);
    const w: Worker = new Worker(
      name,
      'queue',
      [
        ...queueNodeFlags(this.deps.queueMemory),
        path.join(this.dist, 'queue', 'queue-main.js'),
        '--root',
        this.root,
        '--name',
        name,
        '--watch-stdin',
        ...notInheritedArgs(notInherited),
      ],
      this.deps.log.child({ queue: name }),
      this.deps.policy ?? DEFAULT_POLICY,
      env,
      exited,
      () => this.deps.queueServing?.(name),
    );
    this.workers.set(name, w);
    w.start();
    return w;
  }

  queueNames(): string[] {
    return [...this.workers.keys()];
  }

  /**
   * Waits until each queue process and the web serve (their sockets and port listen), die or
   * stop, for at most `timeoutMs`; then says which serve and which do not, and what the web is.
   */
  async started(timeoutMs: number): Promise<StartReport> {
    const all = [...this.workers.values(), ...(this.web ? [this.web] : [])];
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)));
    await Promise.race([Promise.all(all.map((w) => w.settled())), bound]);
    clearTimeout(timer);
    const queues = [...this.workers.values()];
    return {
      serving: queues.filter((w) => w.ready).map((w) => w.name),
      notServing: queues.filter((w) => !w.ready).map((w) => ({ name: w.name, status: w.status, lastExit: w.lastExit })),
      web: this.web ? { ready: this.web.ready, problem: this.web.problem, status: this.web.status } : null,
    };
  }

  /** up/down/pause/resume through the admin files; the queue's watch sees the change at once. Refusals are thrown as catalogue errors. */
  adminOp(name: string, action: AdminAction): unknown[] {
    if (!isValidQueueName(name) || !fs.existsSync(queuePaths(this.root, name).dir)) throw RqError.of('RQ_ERR_MGR_INVALID_QUEUE');
    const ok = new AdminState(queuePaths(this.root, name), () => undefined).set(action);
    if (!ok) throw RqError.of('RQ_ERR_ADMIN_NOT_ALLOWED');
    return ['ok', name];
  }

  async restartQueue(name: string): Promise<unknown[]> {
    const w = this.workers.get(name);
    if (!w) throw RqError.of('RQ_ERR_MGR_INVALID_QUEUE');
    await w.restart();
    return ['ok', name];
  }

  /** create_queue: normalise, make the directory, start the process; a refusal is thrown with its code. */
  async createQueue(raw: unknown, opts: CreateQueueOptions = {}): Promise<unknown[]> {
    const name = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>).name : undefined;
    if (!isValidQueueName(name)) throw RqError.of('RQ_ERR_QUEUE_NAME_CHARS');
    // Before anything is made: a name cut short in its socket path would run another queue's messages.
    const unfit = queueNameFitProblem(queueNameRoom(this.root), name);
    if (unfit) throw new RqError('RQ_ERR_INVALID_FIELD', unfit);
    if (this.workers.has(name) || fs.existsSync(queuePaths(this.root, name).dir)) throw RqError.of('RQ_ERR_QUEUE_EXISTS');
    let config: Record<string, unknown>;
    try {
      config = normaliseQueueConfig(raw, `create_queue ${name}`) as unknown as Record<string, unknown>;
    } catch (err) {
      throw RqError.of('RQ_ERR_QUEUE_CONFIG_REFUSED', (err as Error).message);
    }
    try {
      await createQueueDir(this.root, config, opts);
    } catch (err) {
      this.deps.log.error({ queue: name, err: (err as Error).message }, 'queue not created');
      throw RqError.of('RQ_ERR_QUEUE_NOT_CREATED').causedBy(err);
    }
    this.startQueue(name);
    this.deps.log.info({ queue: name }, 'queue created');
    return ['success', 'queue created - awesome'];
  }

  /** Stops the queue process and moves its directory, messages and all, to queues/.trash/; an unknown name is thrown (RQ_ERR_MGR_NO_SUCH_QUEUE). */
  async deleteQueue(name: string): Promise<unknown[]> {
    const w = this.workers.get(name);
    if (!w) throw RqError.of('RQ_ERR_MGR_NO_SUCH_QUEUE');
    this.workers.delete(name);
    const done = (async () => {
      await w.stop();
      try {
        const where = await trashQueueDir(this.root, name);
        this.deps.log.info({ queue: name, trash: where }, 'queue deleted; its files are in the trash');
      } catch (err) {
        this.deps.log.error({ queue: name, err: (err as Error).message }, 'could not move the queue to the trash');
      }
    })().finally(() => this.deleting.delete(name));
    this.deleting.set(name, done);
    return ['ok', 'started deleting queue'];
  }

  /** Resolves when a delete of `name` in progress has moved the directory to the trash. */
  async settled(name: string): Promise<void> {
    await this.deleting.get(name);
  }

  /** SIGHUP: HUP every running queue, stop those whose directory vanished, start new ones. */
  async reload(): Promise<void> {
    const present = new Set(await discoverQueues(this.root));
    for (const [name, w] of this.workers) {
      if (present.has(name)) w.signal('SIGHUP');
      else {
        this.workers.delete(name);
        await w.stop();
      }
    }
    for (const name of present) if (!this.workers.has(name)) this.startQueue(name);
  }

  /**
   * The first thing a stop does, before anything it waits for: from here on a child that exits is
   * stopped, not restarted (a TERM to the whole process group reaches the children at once).
   */
  retire(): void {
    this.stopping = true;
    for (const w of [this.web, this.timers, ...this.workers.values()]) w?.retire();
  }

  /**
   * Every worker retired, then the clients: the web lets requests in flight finish, which needs
   * their queues still up; then the queues (their scripts get TERM, then KILL).
   */
  async shutdown(): Promise<void> {
    this.retire();
    await Promise.all([this.web?.stop(WEB_CLOSE_MS + (this.deps.webGraceMs ?? 0)), this.timers?.stop()]);
    await Promise.all([...this.workers.values()].map((w) => w.stop()));
  }

  /** Each worker; `problem` is what one that cannot serve named (a port in use), with its fix. */
  status(): Record<string, WorkerRow> {
    const out: Record<string, WorkerRow> = {};
    for (const w of [...this.workers.values(), ...(this.web ? [this.web] : []), ...(this.timers ? [this.timers] : [])]) {
      out[w.name] = {
        status: w.status,
        pid: w.pid,
        uptime: w.child ? Math.floor((Date.now() - w.startedAt) / 1000) : null,
        last_exit: w.lastExit,
        restarts: w.restarts,
        ready: w.ready,
      };
      if (w.problem) out[w.name].problem = { reason: w.problem.reason, fix: w.problem.fix };
    }
    return out;
  }

  get paths() {
    return rootPaths(this.root);
  }
}
