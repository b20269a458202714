// freePort: a port no other vitest worker can be handed at the same time (a part of the range a worker), never handed out twice by one process.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { freePort } from './rq-root.js';

describe('freePort', () => {
  it("gives each worker ports from a part of the range of its own, and this worker's ports once each", async () => {
    const pool = Number(process.env.VITEST_POOL_ID);
    expect(Number.isInteger(pool) && pool > 0).toBe(true);
    const span = Math.floor((Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]) - 10_000) / 8);
    const low = 10_000 + ((pool - 1) % 8) * span;
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) expect(p >= low && p < low + span, String(p)).toBe(true);
  });
});
