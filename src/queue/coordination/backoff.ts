// Retries of the messages queues and rq-mgr send each other (rq-beyond §B8.2, §B8.4, §B12.3): 1 s doubling to 60 s, on timers a stop cancels.
import { type BackoffPolicy, Doubling } from '../../backoff.js';

export const PEER_RETRY: BackoffPolicy = { baseMs: 1000, maxMs: 60_000 };

export class Backoff {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  get closed(): boolean {
    return this.stopped;
  }

  /** The waits of one retry loop, 1 s doubling to 60 s, for as long as nothing closed it. */
  *waits(): Generator<number> {
    const waits = new Doubling(PEER_RETRY);
    while (!this.stopped) yield waits.next();
  }

  /** Resolves after `ms`; never once closed (the process is stopping, and its waiters with it). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(ms, resolve));
  }

  /** Runs `fn` after `ms`, unless closed first. */
  later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  close(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
