// freePort: a port no other vitest worker can be handed at the same time (a part of the range a worker), never handed out twice by one process.
import { describe, expect, it } from 'vitest';
import { freePort, workerPorts } from './rq-root.js';

describe('freePort', () => {
  it("gives each worker ports from a part of the range of its own, and this worker's ports once each", async () => {
    const pool = Number(process.env.VITEST_POOL_ID);
    expect(Number.isInteger(pool) && pool > 0).toBe(true);
    const { low, high } = workerPorts();
    // Another worker's part does not meet this one.
    process.env.VITEST_POOL_ID = String(pool + 1);
    try {
      const other = workerPorts();
      expect(other.low > high || other.high < low, JSON.stringify({ low, high, other })).toBe(true);
    } finally {
      process.env.VITEST_POOL_ID = String(pool);
    }
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) expect(p >= low && p <= high, String(p)).toBe(true);
  });
});
