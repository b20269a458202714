// Retry delays for failed timer deliveries: exponential from a base, capped.

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** 1 s, 2 s, 4 s … up to one minute: quick when a queue is just restarting, gentle when it stays down. */
export const DELIVERY_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 60_000 };

/** The delay before retry number `attempt` (0 for the first retry). */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DELIVERY_BACKOFF): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt, 30));
}
