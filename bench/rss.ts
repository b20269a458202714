// Resident memory (VmRSS) of what rq-mgr starts on a root with one queue — rq-mgr itself, the queue process, the
// web process and the timers daemon — each idle once it answers (ping, /healthz, get_timers) and has then idled
// 2 s, next to a bare `node -e 'setInterval(()=>{},1e9)'` started in the same run (idle once its main thread waits
// in epoll, then the same 2 s); then the queue process's peak RSS, sampled every 50 ms, while it drains 2,000
// messages (BENCH_N) through a `done ok` script.
// BENCH_QUEUE_MEMORY=lean runs the queue with `"queue_memory": "lean"` in config.json (docs/operations.md).
// Run: npm run build && npm run -s bench bench/rss.ts   (prints one JSON object)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { queuePaths, rootPaths } from '../src/config/paths.js';
import { MgrClient } from '../src/ipc/mgr-client.js';
import { QueueClient } from '../src/ipc/queue-client.js';
import { TimersClient } from '../src/ipc/timers-client.js';
import { waitFor } from '../test/helpers/rq-root.js';
import { DONE_SCRIPT, enqueue, loadavg, privateMb, round, rssMb, waitCounts, writeScript } from './lib.js';
import { webRoot } from './web-lib.js';

const N = Number(process.env.BENCH_N ?? 2000);
const IDLE_MS = 2000;
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
const out: Record<string, unknown> = {};
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  const w = await webRoot({ [Q]: { script } }, process.env.BENCH_QUEUE_MEMORY ? { queue_memory: process.env.BENCH_QUEUE_MEMORY } : undefined);
  try {
    // webRoot has seen /healthz answer, which needs rq-mgr and every queue to answer ping; the timers answer apart.
    const mgr = new MgrClient(rootPaths(w.root).mgrSock);
    const queue = QueueClient.oneShot(queuePaths(w.root, Q).sock);
    const timers = new TimersClient(rootPaths(w.root).timersSock);
    await waitFor(async () => (await mgr.ping()) && (await queue.ping()) && (await timers.timers()).ok, 'rq-mgr, queue and timers to answer');
    await waitFor(async () => (await fs.readFile(`/proc/${bare.pid}/wchan`, 'utf8')) === 'do_epoll_wait', 'bare node to idle in epoll');
    const status = await mgr.status();
    if (!status.ok) throw new Error(`rq-mgr status: ${status.text}`);
    const pidOf = (name: string) => {
      const pid = status.value[name]?.pid;
      if (!pid) throw new Error(`rq-mgr reports no pid for ${name}: ${JSON.stringify(status.raw)}`);
      return pid;
    };
    const pids = { queue: pidOf(Q), mgr: w.mgr.child.pid!, web: pidOf('[web]'), timers: pidOf('[timers]'), bare: bare.pid! };
    await sleep(IDLE_MS);
    const reading = async (field: 'VmRSS' | 'RssAnon') =>
      Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([k, pid]) => [k, await rssMb(pid, field)] as const)));
    const idle = await reading('VmRSS');
    out.idle_mb = Object.fromEntries(Object.entries(idle).map(([k, v]) => [k, mb(v)]));
    // Heap and other private memory; the rest of VmRSS is mapped files (the node binary's pages, mostly shared).
    out.idle_anon_mb = Object.fromEntries(Object.entries(await reading('RssAnon')).map(([k, v]) => [k, mb(v)]));
    out.idle_queue_minus_bare_mb = mb(idle.queue - idle.bare);
    // What one more process costs the host: its private pages (the shared ones, the node binary's above all, are paid once).
    const priv = Object.fromEntries(await Promise.all(Object.entries(pids).map(async ([k, pid]) => [k, await privateMb(pid)] as const)));
    out.idle_private_mb = Object.fromEntries(Object.entries(priv).map(([k, v]) => [k, mb(v)]));
    out.idle_queue_private_minus_bare_mb = mb(priv.queue - priv.bare);

    // Paused while the messages go in, so the peak is the drain's alone.
    const paused = await mgr.admin('pause', Q);
    if (!paused.ok) throw new Error(`pause_queue: ${paused.text}`);
    const q = { name: Q, cmd: (command: string, arg?: unknown) => w.mgr.q(Q, command, arg) };
    await enqueue(q, N, 16);
    out.queued_mb = mb(await rssMb(pids.queue));
    const resumed = await mgr.admin('resume', Q);
    if (!resumed.ok) throw new Error(`resume_queue: ${resumed.text}`);
    const t0 = performance.now();
    out.draining_peak_mb = mb(
      await peakWhile(
        pids.queue,
        waitCounts(q, (n) => n.done === N, 20),
      ),
    );
    out.drain_s = round((performance.now() - t0) / 1000);
    out.drained_mb = mb(await rssMb(pids.queue));
  } finally {
    await w.stop();
  }
} finally {
  const gone = new Promise((r) => (bare.exitCode === null && bare.signalCode === null ? bare.once('exit', r) : r(undefined)));
  bare.kill();
  await gone;
  await fs.rm(dir, { recursive: true, force: true });
}
const idleQueueOver = out.idle_queue_minus_bare_mb as number;
console.log(
  JSON.stringify({
    bench: 'rss',
    messages: N,
    queue_memory: process.env.BENCH_QUEUE_MEMORY ?? 'default',
    ...out,
    target: { idle_queue_minus_bare_mb: 5, draining_peak_mb: 60 },
    target_met: { idle_queue: idleQueueOver <= 5, draining: (out.draining_peak_mb as number) <= 60 },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
