// Where a drained message's CPU goes in the queue process, sampled by perf: BENCH_N messages (default 2,000)
// preloaded in a paused queue, drained through the classic `done ok` bash script with BENCH_WORKERS runs in
// flight (default 4), after an untimed drain of BENCH_WARMUP (default 1,000; V8's optimizing compiler
// still has a share after it, under `compile`). The queue runs under `perf record -g`
// (bench/perf-samples.ts, BENCH_HZ samples a second of CPU) started with --perf-basic-prof; each sample is charged to its thread and to the system call it is in, or to V8's
// collector, its compilers, the kernel outside any call, or `user` (JavaScript, V8's runtime, libc), and the
// main thread's time also to JavaScript functions (`name file:line` of dist/queue/queue-main.js). Figures
// are µs of the queue's CPU a message; the scripts' own CPU is theirs, not the queue's, and is not counted.
// Needs perf (Debian: apt-get install linux-perf), as root or with kernel.perf_event_paranoid ≤ 1.
// Run: npm run build && npm run -s bench bench/drain-cpu.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DONE_SCRIPT, enqueue, liveQueue, loadavg, round, waitDrained, writeScript, type LiveQueue } from './lib.js';
import { HZ, SampleTally, perfQueueWrap, profiled, requirePerf } from './perf-samples.js';

const N = Number(process.env.BENCH_N ?? 2000);
const WARM = Number(process.env.BENCH_WARMUP ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 4);
const Q = 'dcpu';

/** The main thread's ns on a core and ns waiting for one, from /proc/<pid>/task/<pid>/schedstat. */
async function schedstat(pid: number): Promise<number[]> {
  return (await fs.readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8')).trim().split(' ').slice(0, 2).map(Number);
}

requirePerf('bench/drain-cpu.ts');
const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
let lq: LiveQueue | undefined;
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  lq = await liveQueue(Q, { script, num_workers: WORKERS }, perfQueueWrap(dir));
  const q = lq.q;
  if (WARM > 0) await waitDrained(q, await enqueue(q, WARM, 16));
  await fs.writeFile(lq.pauseFile, '');
  const ids = await enqueue(q, N, 16);
  const tally = new SampleTally();
  let seconds = 0;
  let sched: number[] = [];
  const samples = await profiled(
    q.pid,
    dir,
    async () => {
      const s0 = await schedstat(q.pid);
      const t0 = performance.now();
      await fs.rm(lq!.pauseFile);
      seconds = ((await waitDrained(q, ids, WARM)) - t0) / 1000;
      sched = (await schedstat(q.pid)).map((v, i) => v - s0[i]);
    },
    { children: false },
  );
  tally.add(samples, q.pid);
  console.log(
    JSON.stringify({
      bench: 'drain-cpu',
      workers: WORKERS,
      messages: N,
      hz: HZ,
      per_s_sampled: Math.round(N / seconds),
      // The main thread's wall time a message: on a core, ready but waiting for one, and neither (blocked in a call, or idle).
      main_thread_wall_us: {
        total: round((seconds * 1e6) / N, 1),
        running: round(sched[0] / 1e3 / N, 1),
        runnable: round(sched[1] / 1e3 / N, 1),
        blocked_or_idle: round((seconds * 1e9 - sched[0] - sched[1]) / 1e3 / N, 1),
      },
      rq: tally.report(N, 25),
      loadavg_before: load0,
      loadavg_after: await loadavg(),
    }),
  );
} finally {
  await lq?.close();
  await fs.rm(dir, { recursive: true, force: true });
  if (lq) await fs.rm(`/tmp/perf-${lq.q.pid}.map`, { force: true });
}
