// How long a queue process takes to warm up: 4 clients (one request in flight each) create BENCH_BLOCKS blocks of
// BENCH_N messages (default 16 of 500) in a paused queue just started, and the same in the Node floor of
// bench/socket-enqueue.ts; for each block, the user CPU a create (µs, all threads: the JavaScript and V8's
// compilers), which falls as V8 optimises the create path, and the rate. The user CPU is steadier than the rate
// on a shared machine (the system CPU, the disk's share, does not warm up). It says how many creates the
// benchmarks' warm-ups need before they measure a queue that has been running.
// Run: npm run build && npm run -s bench bench/warmup-curve.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFloorServer } from './floor-server.js';
import { connectedClient, liveQueue, loadavg, runLanes, userCpuMs } from './lib.js';

const N = Number(process.env.BENCH_N ?? 500);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 16);
const CLIENTS = 4;
const FIELDS = { dest: 'enq', src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/** Per block: the user CPU a create of process `pid` (µs) and creates a second, through `socks`' clients. */
async function curve(pid: number, sock: string): Promise<{ user_us: number[]; per_s: number[] }> {
  const conns = await Promise.all(Array.from({ length: CLIENTS }, () => connectedClient(sock)));
  const out = { user_us: [] as number[], per_s: [] as number[] };
  try {
    for (let b = 0; b < BLOCKS; b++) {
      const u0 = await userCpuMs(pid);
      const t0 = performance.now();
      await runLanes(N, CLIENTS, async (lane) => {
        const r = await conns[lane].client.create(FIELDS);
        if (!r.ok) throw new Error(`create_message: ${r.text}`);
      });
      out.per_s.push(Math.round(N / ((performance.now() - t0) / 1000)));
      out.user_us.push(Math.round((((await userCpuMs(pid)) - u0) / N) * 1000));
    }
  } finally {
    for (const c of conns) c.close();
  }
  return out;
}

const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
try {
  const lq = await liveQueue('enq', { num_workers: 1 });
  let rq;
  try {
    await fs.writeFile(lq.pauseFile, '');
    rq = await curve(lq.q.pid, lq.q.paths.sock);
  } finally {
    await lq.close();
  }
  const nodeSock = path.join(dir, 'node.sock');
  const nodeFloor = fileURLToPath(new URL('fixtures/enqueue-floor-node.mjs', import.meta.url));
  const server = await startFloorServer(process.execPath, [nodeFloor, nodeSock, path.join(dir, 'node'), '300']);
  let node;
  try {
    node = await curve(server.pid, nodeSock);
  } finally {
    await server.stop();
  }
  console.log(
    JSON.stringify({
      bench: 'warmup-curve',
      creates_per_block: N,
      rq_user_us_per_create: rq.user_us,
      rq_per_s: rq.per_s,
      floor_node_socket_user_us_per_create: node.user_us,
      floor_node_socket_per_s: node.per_s,
      loadavg_before: load0,
      loadavg_after: await loadavg(),
    }),
  );
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
