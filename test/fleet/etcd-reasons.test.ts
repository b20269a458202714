// How etcd's failures are said: a breaker's refusal with the failure that opened it, not with a lease lost since.
import * as cockatiel from 'cockatiel';
import { isRecoverableError, EtcdLeaseInvalidError, GRPCUnavailableError } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { Reasons } from '../../src/fleet/etcd-reasons.js';

describe('reasons as said', () => {
  it("a breaker's refusal is said with the failure that opened it, not with a lease lost since; grpc's empty note is dropped", () => {
    const r = new Reasons(isRecoverableError);
    const refused = new cockatiel.BrokenCircuitError();
    expect(r.why(refused)).toBe(refused.message);
    expect(r.why(new GRPCUnavailableError('14 UNAVAILABLE: connect ECONNREFUSED. Resolution note: '))).toBe('14 UNAVAILABLE: connect ECONNREFUSED');
    expect(r.why(new EtcdLeaseInvalidError('7'))).toMatch(/Lease 7/);
    expect(r.why(refused)).toBe('14 UNAVAILABLE: connect ECONNREFUSED (etcd3 waits before it tries again)');
  });

  it.each([
    ['an empty note after no full stop', new Error('14 UNAVAILABLE: No connection established Resolution note:'), '14 UNAVAILABLE: No connection established'],
    ['an empty note glued to the full stop, blanks after it', new Error('4 DEADLINE_EXCEEDED.Resolution note:  \n'), '4 DEADLINE_EXCEEDED'],
    [
      'a note that says something, kept',
      new Error('14 UNAVAILABLE: DNS failed. Resolution note: no such host'),
      '14 UNAVAILABLE: DNS failed. Resolution note: no such host',
    ],
    ['blanks around the text', new Error('  lease lost \n'), 'lease lost'],
    ['a thrown value that is not an Error', 'ECONNRESET', 'ECONNRESET'],
  ])('%s', (_, thrown, said) => {
    expect(new Reasons(isRecoverableError).why(thrown)).toBe(said);
  });
});
