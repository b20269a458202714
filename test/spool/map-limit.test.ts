// mapLimit: results in input order, and never more than `limit` calls in flight (recovery's lanes rely on it).
import { describe, expect, it } from 'vitest';
import { mapLimit } from '../../src/spool/map-limit.js';

describe('mapLimit', () => {
  it('keeps the input order and at most `limit` calls running at once', async () => {
    let running = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0, 6, 7, 8, 9], 3, async (n) => {
      running++;
      most = Math.max(most, running);
      // Each call yields a number of times that depends on its item, so calls finish out of order.
      for (let i = 0; i < n; i++) await Promise.resolve();
      running--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0, 60, 70, 80, 90]);
    expect(most).toBe(3);
    expect(await mapLimit([], 4, async (n: number) => n)).toEqual([]);
  });
});
