// Calls to rq-mgr's supervisor socket and to the timers socket, one short connection each.
import { mgrCommand, rq2Command } from '../ipc/rq1.js';

export interface MgrClientOptions {
  mgrSock: string;
  timersSock: string;
  timeoutMs?: number;
}

export class MgrClient {
  constructor(private readonly opts: MgrClientOptions) {}

  /** A supervisor command; rejects with RQ_ERR_NO_REPLY when rq-mgr does not answer. */
  call(command: string, rawArg = '', timeoutMs?: number): Promise<unknown> {
    return mgrCommand(this.opts.mgrSock, command, rawArg, { timeoutMs: timeoutMs ?? this.opts.timeoutMs ?? 10_000 });
  }

  /** A timers command (rq2); rejects when the timers process is absent or refuses. */
  timers(command: string, payload?: unknown): Promise<unknown[]> {
    return rq2Command(this.opts.timersSock, command, payload, { timeoutMs: this.opts.timeoutMs ?? 5_000 });
  }
}
