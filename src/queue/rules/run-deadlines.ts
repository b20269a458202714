// A run's two clocks (rq-beyond §B10 timeout, §B11 heartbeat): one timer each, the heartbeat's re-armed lazily when it fires.
import fs from 'node:fs';
import { seconds } from './retry-policy.js';
// A wait longer than a timer holds is armed in steps.
import { timerDelay } from '../../backoff.js';

export interface DeadlineLimits {
  /** Wall seconds the run may take. */
  timeout?: number;
  /** Seconds of silence allowed (no fd 3 line, nor stdio.log growth with `outputFile`). */
  heartbeat?: number;
  /** `job/stdio.log` when the queue's `heartbeat_output` is on. */
  outputFile?: string;
}

/** `afterS`: seconds since the start (timeout) or since the last sign of life (stalled). */
export type Expiry = { kind: 'timeout' | 'stalled'; text: string; afterS: number };

export class RunDeadlines {
  private timeoutTimer: NodeJS.Timeout | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  /** Epoch ms of the last sign of life seen (a line, or output growth at the last look). */
  lastBeat: number;
  private outputSize = -1;

  constructor(
    private readonly limits: DeadlineLimits,
    private readonly startedAt: number,
    private readonly now: () => number,
    private readonly expired: (e: Expiry) => void,
  ) {
    this.lastBeat = startedAt;
    if (limits.timeout !== undefined) this.armTimeout(startedAt + limits.timeout * 1000);
    if (limits.heartbeat !== undefined) {
      this.outputGrew(); // the size at the start is the baseline
      this.armBeat(startedAt + limits.heartbeat * 1000);
    }
  }

  /** A line on fd 3 at `at`: the run is alive. No timer work here; the heartbeat timer looks when it fires. */
  beat(at: number): void {
    this.lastBeat = at;
  }

  /** Seconds of silence allowed, when the run has a heartbeat. */
  get heartbeatTimeout(): number | undefined {
    return this.limits.heartbeat;
  }

  /** Epoch ms of the earlier of the timeout and the heartbeat deadline as things stand (§B11 `running`). */
  deadline(): number {
    const { timeout, heartbeat } = this.limits;
    return Math.min(timeout === undefined ? Infinity : this.startedAt + timeout * 1000, heartbeat === undefined ? Infinity : this.lastBeat + heartbeat * 1000);
  }

  /** The script is gone: nothing more to watch. */
  stop(): void {
    if (this.timeoutTimer) clearTimeout(this.timeoutTimer);
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.timeoutTimer = this.beatTimer = null;
  }

  private elapsed(): number {
    return (this.now() - this.startedAt) / 1000;
  }

  private armTimeout(at: number): void {
    this.timeoutTimer = setTimeout(
      () => {
        if (this.now() < at) return this.armTimeout(at);
        const t = this.limits.timeout!;
        this.fire({ kind: 'timeout', afterS: this.elapsed(), text: `TIMEOUT - killed after ${seconds(this.elapsed())}s (timeout ${seconds(t)}s)` });
      },
      timerDelay(at - this.now()),
    );
  }

  private armBeat(at: number): void {
    this.beatTimer = setTimeout(() => this.checkBeat(), timerDelay(at - this.now()));
  }

  private checkBeat(): void {
    const h = this.limits.heartbeat!;
    if (this.outputGrew()) this.lastBeat = this.now();
    const due = this.lastBeat + h * 1000;
    if (due > this.now()) {
      this.armBeat(due);
      return;
    }
    const silent = (this.now() - this.lastBeat) / 1000;
    this.fire({ kind: 'stalled', afterS: silent, text: `STALLED - no progress for ${seconds(silent)}s (heartbeat_timeout ${seconds(h)}s)` });
  }

  /** One fstat per heartbeat deadline, no watcher: did stdio.log grow since the last look? */
  private outputGrew(): boolean {
    if (!this.limits.outputFile) return false;
    let size: number;
    try {
      size = fs.statSync(this.limits.outputFile).size;
    } catch {
      return false;
    }
    const grew = this.outputSize >= 0 && size > this.outputSize;
    this.outputSize = size;
    return grew;
  }

  private fire(e: Expiry): void {
    this.stop();
    this.expired(e);
  }
}
