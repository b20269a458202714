// etcd3's per-member circuit breaker, made so a call never waits on the breaker's trial call (a member that fails is skipped, and none wedges), and how its refusals are said.
import type * as Cockatiel from 'cockatiel';

/** Failures in a row that open a member's breaker, as etcd3's own default. */
const FAILURES = 3;
/** How long an open breaker skips its member before one trial call: a member back is used again within a second. */
export const HALF_OPEN_AFTER_MS = 1_000;

/**
 * A breaker for one etcd member. cockatiel's breaker makes every call that comes while its trial
 * call is out wait for that call. etcd3 makes its call again, through the same breaker, when etcd
 * refuses the auth token (an etcd restarted forgets its tokens): a trial call refused so waits on
 * itself, and that member's calls all hang from then on. Here a call during the trial is refused at
 * once, as while the breaker is open: the trial is refused with it, the token is new by then, and the
 * next call goes through.
 */
export function memberBreaker(cockatiel: typeof Cockatiel, recoverable: (err: Error) => boolean): Cockatiel.CircuitBreakerPolicy {
  const { circuitBreaker, handleWhen, ConsecutiveBreaker, CircuitState, BrokenCircuitError } = cockatiel;
  const breaker = circuitBreaker(handleWhen(recoverable), { halfOpenAfter: HALF_OPEN_AFTER_MS, breaker: new ConsecutiveBreaker(FAILURES) });
  const execute = breaker.execute.bind(breaker);
  breaker.execute = (fn, signal) => (breaker.state === CircuitState.HalfOpen ? Promise.reject(new BrokenCircuitError()) : execute(fn, signal));
  return breaker;
}

/**
 * Failures as said to a person. A call the breaker above refuses says only that: the failure that
 * opened it is the reason (a refused certificate, an unreachable member), kept; other failures (a
 * lease lost, a watch ended) pass by it. grpc's empty resolution note is dropped.
 */
export class Reasons {
  private last = '';

  /** `opens`: whether a failure is of the kind that opens the breaker (etcd3's isRecoverableError). */
  constructor(private readonly opens: (err: Error) => boolean) {}

  why(err: unknown): string {
    const e = err as { message?: unknown; isBrokenCircuitError?: unknown } | null;
    const text = (typeof e?.message === 'string' ? e.message : String(err)).replace(/\.?\s*Resolution note:\s*$/, '').trim();
    if (e?.isBrokenCircuitError === true) return this.last === '' ? text : `${this.last} (etcd3 waits before it tries again)`;
    if (err instanceof Error && this.opens(err)) this.last = text;
    return text;
  }
}
