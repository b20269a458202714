// Drain rate: 2,000 messages through a bash script that writes `done ok`, num_workers 1 and 4,
// next to a bare Node process spawning and reaping the same script sequentially (same run).
// Run: npx vite-node bench/drain.ts   (prints one JSON object)
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { DONE_SCRIPT, enqueue, liveQueue, round, spawnFloor, waitCounts, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 2000);

async function drain(workers: number, script: string): Promise<number> {
  const lq = await liveQueue(`drain${workers}`, { script, num_workers: workers });
  try {
    await fs.writeFile(lq.pauseFile, '');
    await enqueue(lq.q, N, 16);
    const t0 = performance.now();
    await fs.rm(lq.pauseFile);
    const t1 = await waitCounts(lq.q, (n) => n.done === N);
    return N / ((t1 - t0) / 1000);
  } finally {
    await lq.close();
  }
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const script = await writeScript(dir, DONE_SCRIPT);
const floorBefore = await spawnFloor(script, 400, dir);
const w1 = await drain(1, script);
const w4 = await drain(4, script);
const floorAfter = await spawnFloor(script, 400, dir);
const floor = (floorBefore + floorAfter) / 2;
await fs.rm(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    bench: 'drain',
    messages: N,
    floor_spawn_per_s: round(floor),
    workers1_per_s: round(w1),
    workers1_ratio: round(w1 / floor),
    workers4_per_s: round(w4),
    workers4_ratio: round(w4 / floor),
    targets: { workers1_ratio: 0.6, workers4_ratio: 1.0 },
  }),
);
