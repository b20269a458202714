// etcd3's per-member circuit breaker, made so a call never waits on the breaker's trial call: a member that fails is skipped, and none wedges.
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
  const failures = new ConsecutiveBreaker(FAILURES);
  const breaker = circuitBreaker(handleWhen(recoverable), { halfOpenAfter: HALF_OPEN_AFTER_MS, breaker: failures });
  // A trial ended by a failure the breaker does not count (a refusal, above) closes it without clearing its count: cleared here, or
  // the next failure alone would open it again.
  breaker.onReset(() => failures.success());
  const execute = breaker.execute.bind(breaker);
  breaker.execute = (fn, signal) => (breaker.state === CircuitState.HalfOpen ? Promise.reject(new BrokenCircuitError()) : execute(fn, signal));
  return breaker;
}
