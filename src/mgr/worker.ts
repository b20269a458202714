// One supervised child process (queue, web or timers) with restart back-off and an ERROR ceiling.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from 'pino';

export type WorkerStatus = 'RUNNING' | 'BACKOFF' | 'ERROR' | 'STOPPING' | 'STOPPED';

export interface WorkerPolicy {
  /** First restart delay; doubles with each fast death. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A child that lived less than this died "fast". */
  fastMs: number;
  /** Consecutive fast deaths after which the worker is marked ERROR and left alone. */
  maxFastDeaths: number;
}

export const DEFAULT_POLICY: WorkerPolicy = { baseDelayMs: 100, maxDelayMs: 30_000, fastMs: 10_000, maxFastDeaths: 10 };

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
  ) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.startedAt !== 0) this.restarts++;
    // stdin is a pipe only we hold: the child sees EOF and exits if rq-mgr dies abruptly.
    const child = spawn(process.execPath, this.argv, { stdio: ['pipe', 'inherit', 'inherit'], env: this.env });
    this.child = child;
    this.status = 'RUNNING';
    this.startedAt = Date.now();
    child.stdin?.on('error', () => undefined);
    child.once('error', (err) => this.log.error({ worker: this.name, err: err.message }, 'could not start'));
    child.once('exit', (code, signal) => this.onExit(child, code, signal));
    // A first start is bookkeeping (rq-mgr's own line lists the queues); a restart is news.
    if (this.restarts > 0) this.log.info({ worker: this.name, child_pid: child.pid, restarts: this.restarts }, 'started');
    else this.log.debug({ worker: this.name, child_pid: child.pid }, 'started');
  }

  private onExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child !== child) return;
    this.child = null;
    this.lastExit = signal ? `signal ${signal}` : `exit ${code}`;
    const waiters = this.exitWaiters;
    this.exitWaiters = [];
    waiters.forEach((w) => w());
    if (this.status === 'STOPPING') {
      this.status = 'STOPPED';
      this.log.info({ worker: this.name, exit: this.lastExit }, 'stopped');
      return this.exited('STOPPED', this.forced);
    }
    const lived = Date.now() - this.startedAt;
    this.fastDeaths = lived < this.policy.fastMs ? this.fastDeaths + 1 : 1;
    if (this.fastDeaths > this.policy.maxFastDeaths) {
      this.status = 'ERROR';
      this.log.error({ worker: this.name, exit: this.lastExit, deaths: this.fastDeaths }, 'died too often; marked ERROR (restart_queue resets)');
      return this.exited('ERROR', false);
    }
    const delay = Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** (this.fastDeaths - 1));
    this.status = 'BACKOFF';
    this.log.warn({ worker: this.name, exit: this.lastExit, restart_in_ms: delay }, 'died; restarting');
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
