// A member's breaker: a call during its trial call is refused at once instead of waiting on it, so etcd3's own call again (a token etcd
// refused) cannot wait on itself; against a real etcd with users, a client whose token etcd forgot in a restart, after an outage long
// enough to open the breaker, gets through again instead of hanging for good.
import * as cockatiel from 'cockatiel';
import { isRecoverableError, GRPCUnavailableError } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { enableEtcdAuth } from '../helpers/etcd-auth.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { HALF_OPEN_AFTER_MS, memberBreaker } from '../../src/fleet/etcd-breaker.js';

describe('a member breaker', () => {
  afterEach(() => vi.useRealTimers());

  /** A breaker opened by three recoverable failures, its half-open time passed. */
  async function opened() {
    vi.useFakeTimers();
    const b = memberBreaker(cockatiel, isRecoverableError);
    for (let i = 0; i < 3; i++) await expect(b.execute(() => Promise.reject(new GRPCUnavailableError('down')))).rejects.toThrow('down');
    await expect(b.execute(() => 'not run')).rejects.toMatchObject({ isBrokenCircuitError: true });
    vi.advanceTimersByTime(HALF_OPEN_AFTER_MS - 1);
    await expect(b.execute(() => 'not run')).rejects.toMatchObject({ isBrokenCircuitError: true });
    vi.advanceTimersByTime(1);
    return b;
  }

  // Short: a trial waiting on itself never settles.
  it('refuses a call during its trial at once: a trial that calls again through it settles, and the breaker is closed after', { timeout: 5_000 }, async () => {
    const b = await opened();
    const nested: unknown[] = [];
    // As etcd3's: its call is answered (a token refused), then it calls again.
    const trial = b.execute(async () => {
      await Promise.resolve();
      nested.push(await b.execute(() => 'nested').catch((err: { isBrokenCircuitError?: boolean }) => err.isBrokenCircuitError));
      return 'trial';
    });
    await expect(trial).resolves.toBe('trial');
    expect(nested).toEqual([true]);
    expect(b.state).toBe(cockatiel.CircuitState.Closed);
    await expect(b.execute(() => 'next')).resolves.toBe('next');
  });

  it("a trial that fails with the refusal of its own call again, as etcd3's does, closes it with its count cleared: one failure then does not open it", async () => {
    const b = await opened();
    const trial = b.execute(async () => {
      await Promise.resolve();
      return b.execute(() => 'nested');
    });
    await expect(trial).rejects.toMatchObject({ isBrokenCircuitError: true });
    await expect(b.execute(() => Promise.reject(new GRPCUnavailableError('once')))).rejects.toThrow('once');
    await expect(b.execute(() => 'runs')).resolves.toBe('runs');
  });

  it('a trial that fails opens it again for the half-open time', async () => {
    const b = await opened();
    await expect(b.execute(() => Promise.reject(new GRPCUnavailableError('still down')))).rejects.toThrow('still down');
    await expect(b.execute(() => 'not run')).rejects.toMatchObject({ isBrokenCircuitError: true });
    vi.advanceTimersByTime(HALF_OPEN_AFTER_MS);
    await expect(b.execute(() => 'back')).resolves.toBe('back');
  });
});

describe('an etcd with users, restarted after an outage that opened the breaker', { timeout: 60_000 }, () => {
  let etcd: EtcdProc;
  let store: EtcdStore;
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    await enableEtcdAuth(etcd.url, null, 'rq', 'rq-secret', 'root-secret');
    store = await EtcdStore.open({ endpoints: [etcd.url], credentials: { auth: { user: 'rq', password: 'rq-secret' } } });
  }, 60_000);
  afterAll(async () => {
    store?.close();
    await etcd?.cleanup();
  });

  it('the first call after it, made with the token etcd forgot, does not wedge the client: a call goes through again', async () => {
    await store.put('/rq/fleet/k', 'before');
    await etcd.stop();
    // etcd3 tries a call up to four times: one call that fails opens the breaker.
    await expect(store.put('/rq/fleet/k', 'down')).rejects.toThrow(/ECONNREFUSED/);
    // Refused by the breaker at once, with the reason before it.
    await expect(store.put('/rq/fleet/k', 'down')).rejects.toThrow(/ECONNREFUSED.*\(etcd3 waits before it tries again\)/);
    await etcd.run();
    // Each try answers or fails within the call's bound; a wedged client would hang every one of them until the wait gives up.
    await waitFor(() => store.put('/rq/fleet/k', 'after').then(() => true), 'a put to go through', 20_000);
    expect((await store.getPrefix('/rq/fleet/k'))[0].value).toBe('after');
  });
});
