// The environment a queue process gets for memory: malloc's trim threshold fixed, unless the operator chose one.
import { describe, expect, it } from 'vitest';
import { notInheritedArgs, queueEnv } from '../../src/queue/node-flags.js';

describe('queueEnv', () => {
  it('fixes malloc trimming at 128 KiB and keeps every other variable', () => {
    expect(queueEnv({ PATH: '/bin', RQ_X: '1' })).toEqual({
      env: { PATH: '/bin', RQ_X: '1', MALLOC_TRIM_THRESHOLD_: '131072' },
      notInherited: ['MALLOC_TRIM_THRESHOLD_'],
    });
  });

  it("keeps the operator's own threshold, for its scripts too", () => {
    expect(queueEnv({ MALLOC_TRIM_THRESHOLD_: '0' })).toEqual({ env: { MALLOC_TRIM_THRESHOLD_: '0' }, notInherited: [] });
  });

  it('passes what scripts do not inherit as one queue argument', () => {
    expect(notInheritedArgs(['A', 'B'])).toEqual(['--not-inherited', 'A,B']);
    expect(notInheritedArgs([])).toEqual([]);
  });
});
