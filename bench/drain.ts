// Drain rate: 2,000 messages through a bash script that writes `done ok`, num_workers 1 and 4,
// next to a bare Node process spawning and reaping the same script sequentially (same run), and
// the queue process's own CPU time per message (steadier than a rate on a shared 2-core machine).
// Run: npx vite-node bench/drain.ts   (prints one JSON object)
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { DONE_SCRIPT, cpuMs, enqueue, liveQueue, round, spawnFloor, waitCounts, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 2000);

async function drain(workers: number, script: string): Promise<{ perS: number; cpuMsPerMsg: number }> {
  const lq = await liveQueue(`drain${workers}`, { script, num_workers: workers });
  try {
    await fs.writeFile(lq.pauseFile, '');
    await enqueue(lq.q, N, 16);
    const pid = lq.q.child.pid!;
    const cpu0 = await cpuMs(pid);
    const t0 = performance.now();
    await fs.rm(lq.pauseFile);
    const t1 = await waitCounts(lq.q, (n) => n.done === N);
    const cpu1 = await cpuMs(pid);
    return { perS: N / ((t1 - t0) / 1000), cpuMsPerMsg: (cpu1 - cpu0) / N };
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
    workers1_per_s: round(w1.perS),
    workers1_ratio: round(w1.perS / floor),
    workers1_queue_cpu_ms_per_msg: round(w1.cpuMsPerMsg, 3),
    workers4_per_s: round(w4.perS),
    workers4_ratio: round(w4.perS / floor),
    workers4_queue_cpu_ms_per_msg: round(w4.cpuMsPerMsg, 3),
    targets: { workers1_ratio: 0.6, workers4_ratio: 1.0 },
  }),
);
