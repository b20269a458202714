// The environment a queue process gets for memory: malloc's trim threshold fixed, unless the operator chose one.
import { describe, expect, it } from 'vitest';
import { queueEnv } from '../../src/queue/node-flags.js';

describe('queueEnv', () => {
  it('fixes malloc trimming at 128 KiB and keeps every other variable', () => {
    expect(queueEnv({ PATH: '/bin', RQ_X: '1' })).toEqual({ PATH: '/bin', RQ_X: '1', MALLOC_TRIM_THRESHOLD_: '131072' });
  });

  it("keeps the operator's own threshold", () => {
    expect(queueEnv({ MALLOC_TRIM_THRESHOLD_: '0' }).MALLOC_TRIM_THRESHOLD_).toBe('0');
  });
});
