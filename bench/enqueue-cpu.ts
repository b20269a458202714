// Where a socket create's CPU goes, in the queue and in its Node floor (bench/fixtures/enqueue-floor-node.mjs),
// sampled by perf: 4 clients (BENCH_CLIENTS) each with one request in flight create BENCH_N messages (default
// 20,000) in a paused queue, and as many through the Node floor, in alternating blocks of the same run, each
// block under `perf record -g` of that one process (bench/perf-samples.ts, BENCH_HZ samples a second of CPU,
// default 4,000), both started with --perf-basic-prof so JavaScript frames have names. Each sample is charged
// to its thread (the main thread, or the others: libuv's pool, V8's helpers) and to the system call it is in,
// or to V8's collector, its compilers, the kernel outside any call (scheduling, interrupts, page faults), or
// `user` (JavaScript, V8's runtime, libc). The main thread's time is also given by JavaScript function:
// innermost (the function's own code and the native calls it made) and under (everything it called), as
// `name file:line` of the bundle (dist/queue/queue-main.js; its .map leads back to src/). The figures are µs
// of CPU a create; perf slows both sides alike: read shares and differences, not rates.
// Needs perf (Debian: apt-get install linux-perf), as root or with kernel.perf_event_paranoid ≤ 1.
// Run: npm run build && npm run -s bench bench/enqueue-cpu.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFloorServer, type FloorServer } from './floor-server.js';
import { connectedClient, liveQueue, loadavg, runLanes, type LiveQueue } from './lib.js';
import { HZ, SampleTally, perfNodeFlags, perfQueueWrap, profiled, requirePerf } from './perf-samples.js';

const N = Number(process.env.BENCH_N ?? 20_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const BLOCKS = 4;
const Q = 'enq';
const FIELDS = { dest: Q, src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

requirePerf('bench/enqueue-cpu.ts');
const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
let lq: LiveQueue | undefined;
let floor: FloorServer | undefined;
const conns: Awaited<ReturnType<typeof connectedClient>>[] = [];
try {
  lq = await liveQueue(Q, { num_workers: 1 }, perfQueueWrap(dir));
  await fs.writeFile(lq.pauseFile, '');
  const first = await connectedClient(lq.q.paths.sock);
  conns.push(first);
  const sample = await first.client.create(FIELDS);
  if (!sample.ok) throw new Error(`create_message: ${sample.text}`);
  // The floor writes a msg of the real size.
  const msgBytes = (await fs.stat(path.join(lq.q.paths.state.que, sample.value.split('/').pop()!, 'msg'))).size;
  const floorSock = path.join(dir, 'node.sock');
  const fixture = fileURLToPath(new URL('fixtures/enqueue-floor-node.mjs', import.meta.url));
  floor = await startFloorServer(process.execPath, [...perfNodeFlags(dir, 'floor'), fixture, floorSock, path.join(dir, 'node'), String(msgBytes)]);
  const sides = [
    { pid: lq.q.pid, sock: lq.q.paths.sock },
    { pid: floor.pid, sock: floorSock },
  ];
  const lanes: Awaited<ReturnType<typeof connectedClient>>[][] = [];
  for (const s of sides) {
    const mine = [];
    for (let i = 0; i < CLIENTS; i++) mine.push(await connectedClient(s.sock));
    lanes.push(mine);
    conns.push(...mine);
  }
  const creates = (k: number, count: number) =>
    runLanes(count, CLIENTS, async (lane) => {
      const r = await lanes[k][lane].client.create(FIELDS);
      if (!r.ok) throw new Error(`create: ${r.text}`);
    });
  // Warm-up, not sampled: the JIT on both sides, the queue's blank directories.
  for (const k of [0, 1]) await creates(k, 500);
  const tallies = sides.map(() => new SampleTally());
  const per = Math.ceil(N / BLOCKS);
  const seconds = [0, 0];
  for (let b = 0; b < BLOCKS; b++) {
    for (const k of [0, 1]) {
      const script = await profiled(sides[k].pid, dir, async () => {
        const t0 = performance.now();
        await creates(k, per);
        seconds[k] += (performance.now() - t0) / 1000;
      });
      tallies[k].add(script, sides[k].pid);
    }
  }
  const report = (k: number) => ({ creates_per_s_sampled: Math.round((per * BLOCKS) / seconds[k]), ...tallies[k].report(per * BLOCKS) });
  console.log(
    JSON.stringify({
      bench: 'enqueue-cpu',
      clients: CLIENTS,
      messages: per * BLOCKS,
      hz: HZ,
      rq: report(0),
      floor_node_socket: report(1),
      loadavg_before: load0,
      loadavg_after: await loadavg(),
    }),
  );
} finally {
  for (const c of conns) c.close();
  await floor?.stop();
  await lq?.close();
  await fs.rm(dir, { recursive: true, force: true });
  // The symbol maps --perf-basic-prof wrote for perf.
  for (const pid of [lq?.q.pid, floor?.pid]) if (pid !== undefined) await fs.rm(`/tmp/perf-${pid}.map`, { force: true });
}
