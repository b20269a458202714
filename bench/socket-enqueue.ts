// Durable creates per second over the queue socket: 4 clients (BENCH_CLIENTS), each on its own connection with one request in
// flight, create 2,000 messages (BENCH_N) in a paused queue (its pause file: nothing runs beside the creates);
// each create's acknowledge time (request sent → `ok`, which waits for its journal record's shared fdatasync)
// gives p50/p99. Baseline in alternating blocks of the same run, at the same concurrency: this Node process doing
// mkdir + write of a msg file of the real size + rename into a que dir, without any fsync, on the same filesystem
// (the no-fsync floor of bench/spool.ts); and the same ops followed by a record appended to one journal file with
// group commit (`durableFloor`); and the floor that binds a socket enqueue (bench/fixtures/enqueue-floor.c): the same
// durable work with group commit done in C behind a unix socket served in rq1 frames, sent by the same clients on
// their own connections, so it pays what any daemon pays for the clients' round trips and wake-ups on these two cores;
// and the same in a bare Node process (bench/fixtures/enqueue-floor-node.mjs): what the runtime rq is written in costs it.
// Run: npm run build && npm run -s bench bench/socket-enqueue.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFloorServer, type FloorServer } from './floor-server.js';
import { buildC, connectedClient, cpuMs, durableFloor, fsFloor, liveQueue, loadavg, quantile, round, runLanes } from './lib.js';

const N = Number(process.env.BENCH_N ?? 2000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const BLOCKS = 10;
/**
 * Creates on each side before the timed blocks: a queue that has been running, its JIT's compiles of the create
 * path done (a fresh queue process spends 3-4 times the user CPU a create for its first 3,000 or so) and its blank
 * directories made; `BENCH_WARMUP=40` measures a queue just started.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 4000);
const Q = 'enq';
const FIELDS = { dest: Q, src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/** Runs `count` ops at CLIENTS in flight, each timed; returns the block's seconds, the ops' ms and this process's CPU ms (the clients'). */
async function timedBlock(count: number, op: (lane: number) => Promise<void>): Promise<{ s: number; ms: number[]; clientCpu: number }> {
  const ms: number[] = [];
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await runLanes(count, CLIENTS, async (lane) => {
    const t = performance.now();
    await op(lane);
    ms.push(performance.now() - t);
  });
  const c = process.cpuUsage(c0);
  return { s: (performance.now() - t0) / 1000, ms, clientCpu: (c.user + c.system) / 1000 };
}

const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const conns: Awaited<ReturnType<typeof connectedClient>>[] = [];
const floorConns: Awaited<ReturnType<typeof connectedClient>>[] = [];
let server: FloorServer | undefined;
let nodeServer: FloorServer | undefined;
const nodeConns: Awaited<ReturnType<typeof connectedClient>>[] = [];
let lq: Awaited<ReturnType<typeof liveQueue>> | undefined;
let result: Record<string, unknown> | undefined;
try {
  lq = await liveQueue(Q, { num_workers: 1 });
  await fs.writeFile(lq.pauseFile, '');
  for (let i = 0; i < CLIENTS; i++) conns.push(await connectedClient(lq.q.paths.sock));
  const que = lq.q.paths.state.que;
  const create = async (lane: number) => {
    const r = await conns[lane].client.create(FIELDS);
    if (!r.ok) throw new Error(`create_message: ${r.text}`);
    return r.value;
  };
  // The size of a real msg file, so the floor writes the same bytes.
  const sample = (await create(0)).split('/').pop()!;
  const msgBytes = (await fs.stat(path.join(que, sample, 'msg'))).size;
  const floorOp = await fsFloor(path.join(dir, 'floor'), Buffer.alloc(msgBytes, 'x'), false);
  const durableOp = await durableFloor(path.join(dir, 'durable'), Buffer.alloc(msgBytes, 'x'));
  const built = await buildC('enqueue-floor', dir);
  if (!('bin' in built)) throw new Error(built.missing);
  const floorSock = path.join(dir, 'floor.sock');
  server = await startFloorServer(built.bin, [floorSock, path.join(dir, 'socket'), String(msgBytes)]);
  for (let i = 0; i < CLIENTS; i++) floorConns.push(await connectedClient(floorSock));
  const socketOp = async (lane: number) => {
    const r = await floorConns[lane].client.create(FIELDS);
    if (!r.ok) throw new Error(`socket floor: ${r.text}`);
  };
  const nodeSock = path.join(dir, 'node.sock');
  const nodeFloor = fileURLToPath(new URL('fixtures/enqueue-floor-node.mjs', import.meta.url));
  nodeServer = await startFloorServer(process.execPath, [nodeFloor, nodeSock, path.join(dir, 'node'), String(msgBytes)]);
  for (let i = 0; i < CLIENTS; i++) nodeConns.push(await connectedClient(nodeSock));
  const nodeOp = async (lane: number) => {
    const r = await nodeConns[lane].client.create(FIELDS);
    if (!r.ok) throw new Error(`Node socket floor: ${r.text}`);
  };
  // Warm-up, not counted: JIT on both sides, the queue's blank directories.
  await timedBlock(WARMUP, (lane) => create(lane).then(() => undefined));
  await timedBlock(WARMUP, floorOp);
  await timedBlock(WARMUP, durableOp);
  await timedBlock(WARMUP, socketOp);
  await timedBlock(WARMUP, nodeOp);
  const rq = { s: 0, ms: [] as number[], clientCpu: 0 };
  const floor = { s: 0, ms: [] as number[], clientCpu: 0 };
  const durable = { s: 0, ms: [] as number[], clientCpu: 0 };
  const socket = { s: 0, ms: [] as number[], clientCpu: 0 };
  const node = { s: 0, ms: [] as number[], clientCpu: 0 };
  const per = Math.ceil(N / BLOCKS);
  // The queue idles through the floor's blocks, so its CPU over the loop is the creates' (steadier than a rate under load).
  const cpu0 = await cpuMs(lq.q.pid);
  const floorCpu0 = await cpuMs(server.pid);
  const nodeCpu0 = await cpuMs(nodeServer.pid);
  const mainCpu0 = await cpuMs(lq.q.pid, true);
  const nodeMainCpu0 = await cpuMs(nodeServer.pid, true);
  for (let b = 0; b < BLOCKS; b++) {
    for (const [side, op] of [
      [rq, (lane: number) => create(lane).then(() => undefined)],
      [floor, () => floorOp()],
      [durable, () => durableOp()],
      [socket, socketOp],
      [node, nodeOp],
    ] as const) {
      const r = await timedBlock(per, op);
      side.s += r.s;
      side.ms.push(...r.ms);
      side.clientCpu += r.clientCpu;
    }
  }
  const cpu = (await cpuMs(lq.q.pid)) - cpu0;
  const floorCpu = (await cpuMs(server.pid)) - floorCpu0;
  const nodeCpu = (await cpuMs(nodeServer.pid)) - nodeCpu0;
  const mainCpu = (await cpuMs(lq.q.pid, true)) - mainCpu0;
  const nodeMainCpu = (await cpuMs(nodeServer.pid, true)) - nodeMainCpu0;
  const counts = await conns[0].client.counts();
  if (!counts.ok || counts.value.que !== rq.ms.length + WARMUP + 1)
    throw new Error(`que holds ${JSON.stringify(counts.raw)}, expected ${rq.ms.length + WARMUP + 1}`);
  const rate = (side: { s: number; ms: number[] }) => side.ms.length / side.s;
  const cores = (side: { s: number; ms: number[] }) => (os.availableParallelism() * 1000) / rate(side);
  const ratio = rate(rq) / rate(floor);
  const bestRatio = rate(rq) / Math.max(rate(durable), rate(socket));
  const ackP50 = quantile(rq.ms, 0.5);
  result = {
    creates_per_s: Math.round(rate(rq)),
    floor_nosync_per_s: Math.round(rate(floor)),
    ratio_to_floor_nosync: round(ratio, 3),
    floor_durable_per_s: Math.round(rate(durable)),
    ratio_to_floor_durable: round(rate(rq) / rate(durable), 3),
    floor_durable_to_nosync: round(rate(durable) / rate(floor), 3),
    floor_socket_per_s: Math.round(rate(socket)),
    ratio_to_floor_socket: round(rate(rq) / rate(socket), 3),
    ratio_to_floor_durable_best: round(bestRatio, 3),
    floor_node_socket_per_s: Math.round(rate(node)),
    ratio_to_floor_node_socket: round(rate(rq) / rate(node), 3),
    // The Node floor against the faster durable floor: how much of the goal the runtime alone leaves.
    floor_node_socket_to_durable_best: round(rate(node) / Math.max(rate(durable), rate(socket)), 3),
    ack_ms: { p50: round(ackP50), p99: round(quantile(rq.ms, 0.99)) },
    queue_cpu_ms_per_create: round(cpu / rq.ms.length, 3),
    // The C socket floor's own CPU (both its threads) a create, measured the same way.
    floor_socket_cpu_ms_per_create: round(floorCpu / socket.ms.length, 3),
    floor_node_socket_cpu_ms_per_create: round(nodeCpu / node.ms.length, 3),
    // What bounds the rate. The main thread's CPU a create: a create's request is read, checked and written there, and
    // a batch's fdatasync starts only once the requests read with it are done, so it sits on every `ok`'s path. The
    // clients' CPU (this process) and the machine's cores a create (cores / rate): with these below the cores, the
    // rate is bound by that chain (main thread, sync, reply), not by the two cores.
    main_thread_cpu_ms_per_create: { rq: round(mainCpu / rq.ms.length, 3), floor_node_socket: round(nodeMainCpu / node.ms.length, 3) },
    client_cpu_ms_per_create: { rq: round(rq.clientCpu / rq.ms.length, 3), floor_node_socket: round(node.clientCpu / node.ms.length, 3) },
    cores_ms_per_create: { rq: round(cores(rq), 3), floor_node_socket: round(cores(node), 3) },
    floor_op_ms: { p50: round(quantile(floor.ms, 0.5)), p99: round(quantile(floor.ms, 0.99)) },
    floor_durable_ack_ms: { p50: round(quantile(durable.ms, 0.5)), p99: round(quantile(durable.ms, 0.99)) },
    floor_socket_ack_ms: { p50: round(quantile(socket.ms, 0.5)), p99: round(quantile(socket.ms, 0.99)) },
    floor_node_socket_ack_ms: { p50: round(quantile(node.ms, 0.5)), p99: round(quantile(node.ms, 0.99)) },
    messages: rq.ms.length,
    warmup_creates: WARMUP,
    msg_bytes: msgBytes,
    // Where group commit has batches to share (32 clients), against the no-fsync floor; at 4, against the faster of
    // the two durable floors (in process, or in C behind the socket): the least a durable create costs here.
    target: CLIENTS >= 32 ? { ratio_to_floor_nosync: 0.35 } : { ratio_to_floor_durable_best: 0.9 },
    target_met: CLIENTS >= 32 ? ratio >= 0.35 : bestRatio >= 0.9,
  };
} finally {
  for (const c of [...conns, ...floorConns, ...nodeConns]) c.close();
  await server?.stop();
  await nodeServer?.stop();
  await lq?.close();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ bench: 'socket-enqueue', clients: CLIENTS, blocks: BLOCKS, ...result, loadavg_before: load0, loadavg_after: await loadavg() }));
