// One supervised child process (queue, web or timers) with restart back-off and an ERROR ceiling.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from 'pino';
import { backoffDelay } from '../backoff.js';
import type { ParentReport } from '../daemon.js';

export type WorkerStatus = 'RUNNING' | 'BACKOFF' | 'ERROR' | 'STOPPING' | 'STOPPED';

export interface WorkerPolicy {
  /** First restart delay; doubles with each fast death. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A child that lived less than this died "fast". */
  fastMs: number;
  /** Consecutive fast deaths after which the worker is marked ERROR and left alone. */
  maxFastDeaths: number;
  /**
   * A child that said it serves and then says nothing (no heartbeat, `heartbeatParent`) for this long is
   * stuck, its event loop blocked or the process stopped: it is killed and restarted. Absent: never.
   */
  silentMs?: number;
}

export const DEFAULT_POLICY: WorkerPolicy = { baseDelayMs: 100, maxDelayMs: 30_000, fastMs: 10_000, maxFastDeaths: 10 };

/** A cause the child named before it exited (`tellParent`): a port another program holds, with its fix. */
export interface WorkerProblem {
  key: string;
  reason: string;
  fix: string;
}

export class Worker {
  status: WorkerStatus = 'STOPPED';
  child: ChildProcess | null = null;
  fastDeaths = 0;
  startedAt = 0;
  lastExit: string | null = null;
  /** Starts after the first (a death's restart, restart_queue), for rq_queue_process_restarts_total (rq-beyond §B16). */
  restarts = 0;
  private timer: NodeJS.Timeout | null = null;
  private exitWaiters: (() => void)[] = [];
  /** The last stop had to send KILL. */
  private forced = false;
  /** The current child said it serves (its socket or port listens). */
  ready = false;
  /** What the last child that could not serve said, until one serves: kept through the restarts in between. */
  problem: WorkerProblem | null = null;
  /** The problem said at warn; the same one again at the next restarts is not news. */
  private said: string | null = null;
  /** What the current child named, if anything. */
  private reported: WorkerProblem | null = null;
  /** When the current child last reported anything (ready, a heartbeat). */
  private heardAt = 0;
  private readyWaiters: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly kind: 'queue' | 'web' | 'timers',
    private readonly argv: string[],
    private readonly log: Logger,
    private readonly policy: WorkerPolicy = DEFAULT_POLICY,
    private readonly env: NodeJS.ProcessEnv = process.env,
    /**
     * Told after each exit: whether a restart follows (BACKOFF), or the worker is STOPPED or in
     * ERROR; `forced` when a stop had to KILL it, so what it had started may still run.
     */
    private readonly exited: (status: WorkerStatus, forced: boolean) => void = () => undefined,
    /** Told each time a child says it serves. */
    private readonly served: () => void = () => undefined,
  ) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.startedAt !== 0) this.restarts++;
    // stdin is a pipe only we hold: the child sees EOF and exits if rq-mgr dies abruptly. Its own
    // process group (detached): a terminal's Ctrl-C reaches rq-mgr alone, which stops the children in
    // order (the web before the queues its requests need). The channel carries its ready/problem reports.
    const child = spawn(process.execPath, this.argv, { stdio: ['pipe', 'inherit', 'inherit', 'ipc'], env: this.env, detached: true });
    this.child = child;
    this.status = 'RUNNING';
    this.ready = false;
    this.reported = null;
    this.startedAt = Date.now();
    child.stdin?.on('error', () => undefined);
    child.on('message', (m: ParentReport) => this.onReport(child, m));
    // A channel must not keep rq-mgr alive, nor a child that exits miss its exit.
    child.channel?.unref();
    child.once('error', (err) => this.log.error({ worker: this.name, err: err.message }, 'could not start'));
    // 'close', not 'exit': it comes after the channel's last report (a problem sent just before exiting).
    child.once('close', (code, signal) => this.onExit(child, code, signal));
    this.watch(child);
    // A first start is bookkeeping (rq-mgr's own line lists the queues); a restart is news.
    if (this.restarts > 0 && this.said === null) this.log.info({ worker: this.name, child_pid: child.pid, restarts: this.restarts }, 'started');
    else this.log.debug({ worker: this.name, child_pid: child.pid }, 'started');
  }

  private onReport(child: ChildProcess, m: ParentReport): void {
    if (this.child !== child || typeof m !== 'object' || m === null) return;
    this.heardAt = Date.now();
    if (m.rq === 'ready') {
      // The web says where: after a busy port, its config may name another one now.
      const where = typeof m.url === 'string' ? ` at ${m.url}` : '';
      if (this.problem) this.log.info({ worker: this.name }, `${this.name} serves again${where} (before: ${this.problem.reason})`);
      this.ready = true;
      this.problem = null;
      this.said = null;
      this.wakeReadyWaiters();
      this.served();
    } else if (m.rq === 'problem' && typeof m.reason === 'string' && typeof m.fix === 'string') {
      this.reported = { key: String(m.key), reason: m.reason, fix: m.fix };
      this.problem = this.reported;
    }
  }

  /** Kills the child once it has served and then been silent for silentMs (the policy's); checked ten times in that time. */
  private watch(child: ChildProcess): void {
    const silentMs = this.policy.silentMs;
    if (!silentMs) return;
    let checked = Date.now();
    const check = setInterval(() => {
      if (this.child !== child) return clearInterval(check);
      // rq-mgr's own loop held up this long: the child's reports may wait unread behind this check.
      const late = Date.now() - checked > silentMs / 2;
      checked = Date.now();
      if (late || this.status !== 'RUNNING' || !this.ready || checked - this.heardAt < silentMs) return;
      clearInterval(check);
      this.log.warn(
        { worker: this.name, child_pid: child.pid, silent_ms: checked - this.heardAt },
        `${this.name} said nothing for ${silentMs / 1000} s: stuck; SIGKILL and restart`,
      );
      child.kill('SIGKILL');
    }, silentMs / 10);
    check.unref();
  }

  private wakeReadyWaiters(): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    waiters.forEach((w) => w());
  }

  /** Resolves when the child serves, dies, or stops (whichever first); the caller bounds the wait. */
  settled(): Promise<void> {
    if (this.ready || this.status !== 'RUNNING') return Promise.resolve();
    return new Promise((r) => this.readyWaiters.push(r));
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = null;
    this.ready = false;
    // A death the child did not explain ends what an earlier one named.
    this.problem = this.reported;
    if (!this.problem) this.said = null;
    this.lastExit = signal ? `signal ${signal}` : `exit ${code}`;
    const waiters = this.exitWaiters;
    this.exitWaiters = [];
    waiters.forEach((w) => w());
    // settled() callers learn of the death after the status below is set.
    queueMicrotask(() => this.wakeReadyWaiters());
    if (this.status === 'STOPPING') {
      this.status = 'STOPPED';
      this.log.info({ worker: this.name, exit: this.lastExit }, 'stopped');
      return this.exited('STOPPED', this.forced);
    }
    const lived = Date.now() - this.startedAt;
    this.fastDeaths = lived < this.policy.fastMs ? this.fastDeaths + 1 : 1;
    // A child that named its cause (a port another program holds) waits for that to change: it is
    // tried again with the same back-off up to maxDelayMs, never marked ERROR, and said once.
    if (this.problem) return this.backOff(true);
    if (this.fastDeaths > this.policy.maxFastDeaths) {
      this.status = 'ERROR';
      this.log.error({ worker: this.name, exit: this.lastExit, deaths: this.fastDeaths }, 'died too often; marked ERROR (restart_queue resets)');
      return this.exited('ERROR', false);
    }
    this.backOff(false);
  }

  private backOff(named: boolean): void {
    const delay = backoffDelay(this.fastDeaths - 1, { baseMs: this.policy.baseDelayMs, maxMs: this.policy.maxDelayMs });
    this.status = 'BACKOFF';
    const p = this.problem;
    if (named && p) {
      if (this.said !== p.key) this.log.warn({ worker: this.name, restart_in_ms: delay }, `${p.reason}; ${p.fix}`);
      else this.log.debug({ worker: this.name, exit: this.lastExit, restart_in_ms: delay }, 'still cannot serve; trying again');
      this.said = p.key;
    } else this.log.warn({ worker: this.name, exit: this.lastExit, restart_in_ms: delay }, 'died; restarting');
    this.timer = setTimeout(() => this.start(), delay);
    this.exited('BACKOFF', false);
  }

  /**
   * rq-mgr is going down: from now on an exit is a stop, not a death to restart. A TERM sent to the
   * whole process group (systemd's default) reaches the child before rq-mgr gets round to stopping it.
   */
  retire(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.status = this.child ? 'STOPPING' : 'STOPPED';
  }

  /** TERM, then KILL after `graceMs`; resolves once the child is gone. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    if (!child) {
      this.status = 'STOPPED';
      return;
    }
    this.status = 'STOPPING';
    this.forced = false;
    const gone = new Promise<void>((r) => this.exitWaiters.push(r));
    child.kill('SIGTERM');
    const kill = setTimeout(() => {
      this.log.warn({ worker: this.name }, 'did not stop in time; SIGKILL');
      this.forced = true;
      child.kill('SIGKILL');
    }, graceMs);
    await gone;
    clearTimeout(kill);
  }

  /** restart_queue: stop, forget past deaths, start. */
  async restart(): Promise<void> {
    await this.stop();
    this.fastDeaths = 0;
    this.start();
  }

  signal(sig: NodeJS.Signals): void {
    this.child?.kill(sig);
  }
}
