// A limit key's line of waiters at rq-mgr: ordered by when each became due, then by arrival.
export interface Waiter {
  ref: string;
  queue: string;
  since: number;
  /** Arrival at the arbiter: the tie-break between equal `since`. */
  seq: number;
}

/** Puts `w` in its place by a binary search, so parking is O(log n) comparisons. */
export function parkInOrder(waiting: Waiter[], w: Waiter): void {
  let lo = 0;
  let hi = waiting.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const o = waiting[mid];
    if (o.since < w.since || (o.since === w.since && o.seq < w.seq)) lo = mid + 1;
    else hi = mid;
  }
  waiting.splice(lo, 0, w);
}
