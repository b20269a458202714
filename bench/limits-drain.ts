// What run limits cost a drain: BENCH_N messages (default 1,000) drained at 1 worker by a queue without limits (each run
// accounted from wait4's rusage, as every run is) and by the same queue with `pids_max` and `memory_max` set (each run in
// cgroups of the host's v1 hierarchies: made, joined before exec, read and removed), alternated BENCH_ROUNDS times (default 2).
// Run: npm run build && npm run -s bench bench/limits-drain.ts   (prints one JSON object)
import os from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DONE_SCRIPT, drainRate, loadavg, median, round, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const LIMITS = { pids_max: 10_000, memory_max: '1G' };

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  const load = await loadavg();
  const plain: { perS: number; cpuMsPerMsg: number }[] = [];
  const limited: { perS: number; cpuMsPerMsg: number }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    plain.push(await drainRate(`plain${i}`, { script, num_workers: 1 }, N));
    limited.push(await drainRate(`limited${i}`, { script, num_workers: 1, extra: LIMITS }, N));
  }
  const rate = (xs: typeof plain) => median(xs.map((x) => x.perS));
  const cpu = (xs: typeof plain) => median(xs.map((x) => x.cpuMsPerMsg));
  console.log(
    JSON.stringify({
      bench: 'limits-drain',
      messages: N,
      rounds: ROUNDS,
      loadavg: load,
      limits: LIMITS,
      plain_per_s: plain.map((x) => round(x.perS)),
      limited_per_s: limited.map((x) => round(x.perS)),
      limited_ratio: round(rate(limited) / rate(plain)),
      plain_queue_cpu_ms_per_msg: round(cpu(plain), 3),
      limited_queue_cpu_ms_per_msg: round(cpu(limited), 3),
    }),
  );
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
