// Drain rate: BENCH_N messages (default 2,000) preloaded in a paused queue, then drained through a bash script
// that writes `done ok`, with num_workers 1 and 4, next to the C floor of the same work
// (bench/fixtures/drain-floor.c: a fresh log file, fds 3/4 as pipes, posix_spawn, fd 3 read to its end,
// waitpid) with 1 and 4 runs in flight, measured before and after rq's drains in the same run; the same
// C program doing also a message's file work in the spool (`spool`: the renames que → run → done, job/,
// stdio.log, history, pid, the status fdatasynced, run/ and done/ fsynced once per poll), the floor of
// a spool that keeps rq's on-disk format; and the queue process's own CPU time per message (steadier
// than a rate on a shared 2-core machine).
// Run: npm run build && npm run -s bench bench/drain.ts   (prints one JSON object)
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DONE_SCRIPT, buildC, drainRate, loadavg, round, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 2000);
/** Messages each queue process drains, untimed, before the timed drain (drainRate): `BENCH_WARMUP=0` measures a queue just started. */
const WARM = Number(process.env.BENCH_WARMUP ?? 3000);

/** The C floor's rate for `n` runs with `k` in flight, its log files in a fresh dir under `dir`. */
async function floorRate(bin: string, script: string, dir: string, n: number, k: number, spool = false): Promise<number> {
  const logs = await fs.mkdtemp(path.join(dir, 'floor-'));
  try {
    const { stdout } = await promisify(execFile)(bin, [script, logs, String(n), String(k), ...(spool ? ['spool'] : [])], { timeout: 300_000 });
    return Number(stdout.trim());
  } finally {
    await fs.rm(logs, { recursive: true, force: true });
  }
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  const built = await buildC('drain-floor', dir);
  if ('missing' in built) throw new Error(built.missing);
  const floor = async (k: number, spool = false) => floorRate(built.bin, script, dir, Math.min(N, 1000), k, spool);
  const floors = async () => ({ k1: await floor(1), k4: await floor(4), spoolK1: await floor(1, true), spoolK4: await floor(4, true) });
  const load = await loadavg();
  const before = await floors();
  const w1 = await drainRate('drain1', { script, num_workers: 1 }, N, WARM);
  const w4 = await drainRate('drain4', { script, num_workers: 4 }, N, WARM);
  const after = await floors();
  const f1 = (before.k1 + after.k1) / 2;
  const f4 = (before.k4 + after.k4) / 2;
  const s1 = (before.spoolK1 + after.spoolK1) / 2;
  const s4 = (before.spoolK4 + after.spoolK4) / 2;
  console.log(
    JSON.stringify({
      bench: 'drain',
      messages: N,
      warmup_messages: WARM,
      loadavg: load,
      floor_c_k1_per_s: round(f1),
      floor_c_k4_per_s: round(f4),
      floor_c_spread: { k1: [round(before.k1), round(after.k1)], k4: [round(before.k4), round(after.k4)] },
      floor_c_spool_k1_per_s: round(s1),
      floor_c_spool_k4_per_s: round(s4),
      floor_c_spool_spread: { k1: [round(before.spoolK1), round(after.spoolK1)], k4: [round(before.spoolK4), round(after.spoolK4)] },
      floor_spool_to_plain: { k1: round(s1 / f1), k4: round(s4 / f4) },
      workers1_per_s: round(w1.perS),
      workers1_ratio: round(w1.perS / f1),
      workers1_ratio_spool: round(w1.perS / s1),
      workers1_queue_cpu_ms_per_msg: round(w1.cpuMsPerMsg, 3),
      workers4_per_s: round(w4.perS),
      workers4_ratio: round(w4.perS / f4),
      workers4_ratio_spool: round(w4.perS / s4),
      workers4_queue_cpu_ms_per_msg: round(w4.cpuMsPerMsg, 3),
      targets: { workers1_ratio: 0.7, workers4_ratio: 0.6 },
    }),
  );
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
