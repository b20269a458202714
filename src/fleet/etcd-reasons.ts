// etcd's failures as said to a person: a breaker's refusal with the failure that opened it, grpc's empty note dropped.

/**
 * Failures as said to a person. A call the member breaker (etcd-breaker.ts) refuses says only that: the failure that
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
