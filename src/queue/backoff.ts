// Retries of the messages queues and rq-mgr send each other (rq-beyond §B8.2, §B8.4, §B12.3): 1 s doubling to 60 s, on timers a stop cancels.
export const FIRST_RETRY_MS = 1000;
export const MAX_RETRY_MS = 60_000;

export class Backoff {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  get closed(): boolean {
    return this.stopped;
  }

  /** The waits of one retry loop, 1 s doubling to 60 s, for as long as nothing closed it. */
  *waits(): Generator<number> {
    for (let wait = FIRST_RETRY_MS; !this.stopped; wait = Math.min(wait * 2, MAX_RETRY_MS)) yield wait;
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
