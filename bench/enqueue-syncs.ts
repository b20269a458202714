// What bounds a socket enqueue at few clients: the journal's fdatasyncs, traced by perf in the queue and in its Node floor
// (bench/fixtures/enqueue-floor-node.mjs) while 4 clients (BENCH_CLIENTS) each with one request in flight create BENCH_N
// messages (default 6,000) in a paused queue, then as many through the floor, BENCH_ROUNDS times (default 2) alternating.
// For each side: fdatasyncs a create (1/CLIENTS when every sync covers every client's request), each sync's time, the
// gap from one sync's end to the next one's start, and the share of the time a sync is under way (`disk_busy`): near 1,
// the disk binds and nothing else helps; well below it, the chain between two syncs does (the last requests of a batch
// read and written, the sync started, its `ok`s sent, the clients' next requests read), which is the main thread's work.
// Needs perf (Debian: apt-get install linux-perf), as root or with kernel.perf_event_paranoid ≤ 1.
// Run: npm run build && npm run -s bench bench/enqueue-syncs.ts   (prints one JSON object)
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startFloorServer, type FloorServer } from './floor-server.js';
import { connectedClient, liveQueue, loadavg, quantile, round, runLanes, type LiveQueue } from './lib.js';
import { requirePerf } from './perf-samples.js';

const N = Number(process.env.BENCH_N ?? 6000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP = 4000;
const Q = 'enq';
const FIELDS = { dest: Q, src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/** Each fdatasync's start and end (µs) in `data`, from perf's enter and exit tracepoints, per thread. */
async function syncSpans(data: string): Promise<[number, number][]> {
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', data, '-F', 'tid,time,event'], { maxBuffer: 256 * 1024 * 1024 });
  const open = new Map<string, number>();
  const spans: [number, number][] = [];
  for (const line of stdout.split('\n')) {
    const [tid, time, event] = line.trim().split(/\s+/);
    if (!event) continue;
    const us = Number(time.replace(/:$/, '')) * 1e6;
    if (event.includes('sys_enter_fdatasync')) open.set(tid, us);
    else if (event.includes('sys_exit_fdatasync') && open.has(tid)) {
      spans.push([open.get(tid)!, us]);
      open.delete(tid);
    }
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

/** `count` creates over `sock` with perf tracing `pid`'s fdatasyncs: the rate and the syncs' figures. */
async function traced(pid: number, sock: string, count: number, dir: string, name: string) {
  const lanes = await Promise.all(Array.from({ length: CLIENTS }, () => connectedClient(sock)));
  const data = path.join(dir, `${name}.perf`);
  const perf = spawn('perf', ['record', '-q', '-o', data, '-e', 'syscalls:sys_enter_fdatasync', '-e', 'syscalls:sys_exit_fdatasync', '-p', String(pid)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    // perf attaches within its start; a create that is not traced only lowers the count a little.
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    await runLanes(count, CLIENTS, async (lane) => {
      const r = await lanes[lane].client.create(FIELDS);
      if (!r.ok) throw new Error(`${name}: ${r.text}`);
    });
    const s = (performance.now() - t0) / 1000;
    perf.kill('SIGINT');
    await new Promise((r) => perf.once('exit', r));
    const spans = await syncSpans(data);
    const lengths = spans.map(([a, b]) => b - a);
    const gaps = spans.slice(1).map(([a], i) => Math.max(0, a - spans[i][1]));
    const busy = lengths.reduce((x, y) => x + y, 0);
    return {
      creates_per_s: Math.round(count / s),
      syncs_per_create: round(spans.length / count, 3),
      sync_us: { p50: Math.round(quantile(lengths, 0.5)), p90: Math.round(quantile(lengths, 0.9)) },
      gap_us: { p50: Math.round(quantile(gaps, 0.5)), p90: Math.round(quantile(gaps, 0.9)) },
      disk_busy: round(busy / (busy + gaps.reduce((x, y) => x + y, 0)), 2),
    };
  } finally {
    for (const l of lanes) l.close();
    if (perf.exitCode === null) perf.kill('SIGKILL');
  }
}

requirePerf('bench/enqueue-syncs.ts');
const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
let lq: LiveQueue | undefined;
let floor: FloorServer | undefined;
const rounds: Record<string, unknown>[] = [];
try {
  lq = await liveQueue(Q, { num_workers: 1 });
  await fs.writeFile(lq.pauseFile, '');
  const first = await connectedClient(lq.q.paths.sock);
  const sample = await first.client.create(FIELDS);
  first.close();
  if (!sample.ok) throw new Error(`create_message: ${sample.text}`);
  const msgBytes = (await fs.stat(path.join(lq.q.paths.state.que, sample.value.split('/').pop()!, 'msg'))).size;
  const floorSock = path.join(dir, 'node.sock');
  const fixture = fileURLToPath(new URL('fixtures/enqueue-floor-node.mjs', import.meta.url));
  floor = await startFloorServer(process.execPath, [fixture, floorSock, path.join(dir, 'node'), String(msgBytes)]);
  const sides = [
    { name: 'rq', pid: lq.q.pid, sock: lq.q.paths.sock },
    { name: 'floor_node_socket', pid: floor.pid, sock: floorSock },
  ];
  // Warm-up, not traced: JIT on both sides, the queue's blank directories.
  for (const s of sides) {
    const lanes = await Promise.all(Array.from({ length: CLIENTS }, () => connectedClient(s.sock)));
    await runLanes(WARMUP, CLIENTS, async (lane) => void (await lanes[lane].client.create(FIELDS)));
    for (const l of lanes) l.close();
  }
  for (let r = 0; r < ROUNDS; r++) {
    const round: Record<string, unknown> = {};
    for (const s of sides) round[s.name] = await traced(s.pid, s.sock, N, dir, `${s.name}-${r}`);
    rounds.push(round);
  }
} finally {
  await floor?.stop();
  await lq?.close();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ bench: 'enqueue-syncs', clients: CLIENTS, messages: N, rounds, loadavg_before: load0, loadavg_after: await loadavg() }));
