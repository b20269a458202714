// The one backoff of rq: a wait that doubles from a base up to a cap, with jitter where many waiters would wake together, and the longest wait a timer holds.

/** setTimeout's longest delay (2^31 − 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface BackoffPolicy {
  /** The first wait. */
  baseMs: number;
  /** No wait is longer. */
  maxMs: number;
}

/** The wait before retry `n` (0 for the first): base · 2ⁿ, capped. */
export function backoffDelay(n: number, p: BackoffPolicy): number {
  return Math.min(p.maxMs, p.baseMs * 2 ** Math.min(Math.max(n, 0), 30));
}

/** `delay` shortened by up to `fraction` of itself, `u` uniform in [0, 1): waiters that failed together do not retry together. */
export function withJitter(delay: number, fraction: number, u: number): number {
  return delay * (1 - fraction * u);
}

/** `ms` as a timer holds it: at least 0, at most MAX_TIMER_MS (a later time is looked at again then). */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/** The waits of one retry loop: base, then doubling to the cap; `reset()` after a success starts again from the base. */
export class Doubling {
  private n = 0;
  constructor(private readonly policy: BackoffPolicy) {}

  /** The wait to use now; the one after it is twice as long, up to the cap. */
  next(): number {
    return backoffDelay(this.n++, this.policy);
  }

  /** What next() would give, without moving on. */
  peek(): number {
    return backoffDelay(this.n, this.policy);
  }

  reset(): void {
    this.n = 0;
  }
}
