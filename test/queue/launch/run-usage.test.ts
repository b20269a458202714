// A run's usage from the reap's rusage: its peak memory only where it can be the run's own.
import { describe, expect, it } from 'vitest';
import { rusageOf } from '../../../src/queue/launch/run-usage.js';

describe('rusageOf', () => {
  it('converts the kernel units: µs to ms, KiB to bytes, 512-byte blocks to bytes', () => {
    expect(rusageOf(1_234_567, 89_500, 300_000, 8, 16, 60_000)).toEqual({
      cpu_user_ms: 1235,
      cpu_system_ms: 90,
      memory_peak_bytes: 300_000 * 1024,
      io_read_bytes: 4096,
      io_write_bytes: 8192,
      source: 'rusage',
    });
  });

  it("leaves the peak out when it is not above the queue's own: the kernel carries the spawner's peak over the exec", () => {
    expect(rusageOf(1000, 1000, 56_000, 0, 0, 56_000)).not.toHaveProperty('memory_peak_bytes');
    expect(rusageOf(1000, 1000, 3_000, 0, 0, 56_000)).not.toHaveProperty('memory_peak_bytes');
    expect(rusageOf(1000, 1000, 56_001, 0, 0, 56_000).memory_peak_bytes).toBe(56_001 * 1024);
  });
});
