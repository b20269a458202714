// Memory of what rq-mgr starts on a root with BENCH_QUEUES idle queues (default 1) — rq-mgr itself, the queue
// processes, the web process and the timers daemon — each idle once it answers (ping, /healthz, get_timers) and has
// then idled 2 s, next to two floors started in the same run: a bare `node -e 'setInterval(()=>{},1e9)'` and a node
// with the queue's flags that only listens on a unix socket and watches a directory, as an idle queue must (each
// idle once its main thread waits in epoll, then the same 2 s). Each process is read four ways: VmRSS, RssAnon,
// private (Private_Clean + Private_Dirty of smaps_rollup: what one more such process costs the host) and PSS (Pss
// of smaps_rollup: private pages plus each shared page divided among the processes that map it). PSS depends on
// how many processes share pages — the node binary's text is split among every node process, this bench's own
// included — so it is read with all of them up: with BENCH_QUEUES=10 the queue figure is one queue's PSS among ten,
// with the range over all ten beside it. Then the first queue's peak RSS, sampled every 50 ms, while it drains
// 2,000 messages (BENCH_N; 0 skips the drain) through a `done ok` script. Each idle process is read twice: 2 s after it
// answers, and settled, BENCH_SETTLE_S (default 20) s after: V8's memory reducer, which runs once a process has
// allocated little for ~8 s, gives back what its start used (an idle queue ~2 MB), so the settled figures are what an
// idle queue costs a host for as long as it idles.
// BENCH_QUEUE_MEMORY=lean runs the queues with `"queue_memory": "lean"` in config.json (docs/operations.md).
// Run: npm run build && npm run -s bench bench/rss.ts   (prints one JSON object; BENCH_QUEUES=10 BENCH_N=0 for ten)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { queuePaths, rootPaths } from '../src/config/paths.js';
import { MgrClient } from '../src/ipc/mgr-client.js';
import { QueueClient } from '../src/ipc/queue-client.js';
import { TimersClient } from '../src/ipc/timers-client.js';
import { waitFor } from '../test/helpers/rq-root.js';
import { DONE_SCRIPT, enqueue, loadavg, privateMb, pssMb, round, rssMb, waitCounts, writeScript } from './lib.js';
import { webRoot } from './web-lib.js';
import type { WebRoot } from '../test/web/web-root.js';
import { queueNodeFlags } from '../src/queue/node-flags.js';

const N = Number(process.env.BENCH_N ?? 2000);
const QUEUES = Number(process.env.BENCH_QUEUES ?? 1);
const IDLE_MS = 2000;
const SETTLE_MS = Number(process.env.BENCH_SETTLE_S ?? 20) * 1000;
const SAMPLE_MS = 50;
const Q = 'idle';

const mb = (x: number) => round(x, 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Peak RSS of `pid` while `work` runs, read every SAMPLE_MS (and once at the end). */
async function peakWhile(pid: number, work: Promise<unknown>): Promise<number> {
  let peak = 0;
  const sampler = setInterval(
    () =>
      void rssMb(pid).then(
        (r) => (peak = Math.max(peak, r)),
        () => undefined,
      ),
    SAMPLE_MS,
  );
  try {
    await work;
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, await rssMb(pid));
}

const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const bare = spawn(process.execPath, ['-e', 'setInterval(()=>{},1e9)'], { stdio: 'ignore' });
// What any queue process must do idle: listen on its socket and watch its directory, with the queue's V8 flags.
const floorSock = path.join(dir, 'floor.sock');
const LISTEN_WATCH = `require('net').createServer().listen(${JSON.stringify(floorSock)}); require('fs').watch(${JSON.stringify(dir)}, () => {});`;
const floor = spawn(process.execPath, [...queueNodeFlags(), '-e', LISTEN_WATCH], { stdio: 'ignore' });
const out: Record<string, unknown> = {};
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  const names = [Q, ...Array.from({ length: QUEUES - 1 }, (_, i) => `${Q}${i + 2}`)];
  const w = await webRoot(
    Object.fromEntries(names.map((name) => [name, { script }])),
    process.env.BENCH_QUEUE_MEMORY ? { queue_memory: process.env.BENCH_QUEUE_MEMORY } : undefined,
  );
  try {
    // webRoot has seen /healthz answer, which needs rq-mgr and every queue to answer ping; the timers answer apart.
    const mgr = new MgrClient(rootPaths(w.root).mgrSock);
    const queue = QueueClient.oneShot(queuePaths(w.root, Q).sock);
    const timers = new TimersClient(rootPaths(w.root).timersSock);
    await waitFor(async () => (await mgr.ping()) && (await queue.ping()) && (await timers.timers()).ok, 'rq-mgr, queue and timers to answer');
    for (const p of [bare, floor])
      await waitFor(async () => (await fs.readFile(`/proc/${p.pid}/wchan`, 'utf8')) === 'do_epoll_wait', 'a floor to idle in epoll');
    const status = await mgr.status();
    if (!status.ok) throw new Error(`rq-mgr status: ${status.text}`);
    const pidOf = (name: string) => {
      const pid = status.value[name]?.pid;
      if (!pid) throw new Error(`rq-mgr reports no pid for ${name}: ${JSON.stringify(status.raw)}`);
      return pid;
    };
    const pids = { queue: pidOf(Q), mgr: w.mgr.child.pid!, web: pidOf('[web]'), timers: pidOf('[timers]'), bare: bare.pid!, listen_watch: floor.pid! };
    await sleep(IDLE_MS);
    const read = async (pid: number) => ({
      rss: mb(await rssMb(pid)),
      anon: mb(await rssMb(pid, 'RssAnon')),
      private: mb(await privateMb(pid)),
      pss: mb(await pssMb(pid)),
    });
    const readAll = async () => Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([k, pid]) => [k, await read(pid)] as const)));
    out.idle_mb = await readAll();
    await sleep(SETTLE_MS - IDLE_MS);
    const settled = await readAll();
    out.settled_s = SETTLE_MS / 1000;
    out.settled_mb = settled;
    const queuePss = await Promise.all(names.map(async (name) => mb(await pssMb(pidOf(name)))));
    out.settled_queues_pss_range_mb = [Math.min(...queuePss), Math.max(...queuePss)];
    out.settled_queue_private_minus_bare_mb = mb(settled.queue.private - settled.bare.private);
    out.settled_queue_private_minus_listen_watch_mb = mb(settled.queue.private - settled.listen_watch.private);
    out.settled_queue_pss_minus_listen_watch_mb = mb(settled.queue.pss - settled.listen_watch.pss);

    if (N > 0) await drain(w, pids.queue);
  } finally {
    await w.stop();
  }
} finally {
  for (const p of [bare, floor]) {
    const gone = new Promise((r) => (p.exitCode === null && p.signalCode === null ? p.once('exit', r) : r(undefined)));
    p.kill();
    await gone;
  }
  await fs.rm(dir, { recursive: true, force: true });
}
const queuePss = (out.settled_mb as Record<string, { pss: number }>).queue.pss;
console.log(
  JSON.stringify({
    bench: 'rss',
    queues: QUEUES,
    messages: N,
    queue_memory: process.env.BENCH_QUEUE_MEMORY ?? 'default',
    ...out,
    target: { idle_queue_pss_mb: 8, draining_peak_mb: 60 },
    target_met: { idle_queue: queuePss <= 8, draining: N > 0 ? (out.draining_peak_mb as number) <= 60 : null },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);

/** The first queue's RSS once N messages are queued, at its peak while they drain, and after. */
async function drain(w: WebRoot, pid: number): Promise<void> {
  const mgr = new MgrClient(rootPaths(w.root).mgrSock);
  // Paused while the messages go in, so the peak is the drain's alone.
  const paused = await mgr.admin('pause', Q);
  if (!paused.ok) throw new Error(`pause_queue: ${paused.text}`);
  const q = { name: Q, cmd: (command: string, arg?: unknown) => w.mgr.q(Q, command, arg) };
  await enqueue(q, N, 16);
  out.queued_mb = mb(await rssMb(pid));
  const resumed = await mgr.admin('resume', Q);
  if (!resumed.ok) throw new Error(`resume_queue: ${resumed.text}`);
  const t0 = performance.now();
  out.draining_peak_mb = mb(
    await peakWhile(
      pid,
      waitCounts(q, (n) => n.done === N, 20),
    ),
  );
  out.drain_s = round((performance.now() - t0) / 1000);
  out.drained_mb = mb(await rssMb(pid));
}
