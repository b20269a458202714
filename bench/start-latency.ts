// Start latency on an idle queue: a client's connect to the queue socket → create_message → the run script's
// first act, next to a C floor (bench/fixtures/spawn-floor.c: one 1 KiB write + fdatasync to an append file, the
// durable journal record, then posix_spawn of the same script with pipes on fds 3/4), in alternating blocks of
// the same run. The script's first act writes $EPOCHREALTIME to a FIFO; the latency is that timestamp minus the
// client's realtime clock read before its connect: the moment the script ran, not when someone read its line
// (that is reported apart, as *_observed_ms, with the reader's wake-up in it). The next round waits until the
// message is done (wait_message), so every create finds the queue idle. Two more floors serve the same round behind
// the queue socket's framing, sent the same client's connect and create_message as any daemon is, timed the same way:
// spawn-floor.c --socket in C, and bench/fixtures/spawn-floor-node.mjs, a bare Node server with rq's native spawner;
// where rq gives each run a cgroup (cgroup v2 writable, RQ_CGROUP not off), that Node floor again with a fresh cgroup
// per round (made, started into, removed), so the kernel's share of a run cgroup is measured in the same run.
// BENCH_GAP_MS spaces the rq rounds (1200: each create comes after the journal's checkpoint, as an isolated one does).
// Run: npm run build && npm run -s bench bench/start-latency.ts   (BENCH_ROUNDS, default 200; prints one JSON object)
import { execFile } from 'node:child_process';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { QueueClient } from '../src/ipc/queue-client.js';
import { fileURLToPath } from 'node:url';
import { ADDON_PATH } from '../src/queue/launch/native-launcher.js';
import { ownCgroupHome, removeTree } from '../src/queue/launch/cgroup-fs.js';
import { queuesHome } from '../src/queue/launch/cgroup-leaf.js';
import { FifoLines } from './fifo-lines.js';
import { startFloorServer } from './floor-server.js';
import { buildC, cpuMs, liveQueue, loadavg, median, nowMs, quantile, round, writeScript } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 0);
const BLOCKS = 10;
/**
 * Rounds on each Node side (rq, the Node floor) before the timed blocks: a queue that has been running, its JIT's
 * compiles of the create and start paths done, where a fresh one runs them unoptimised for its first thousands
 * (`BENCH_WARMUP=10` measures a queue just started). The C floors, with no JIT, take 10: the page cache for bash and the script.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const C_WARMUP = 10;
/** The index of the Node floor in `sockets`, after the C one; the Node floor with run cgroups, if any, is next. */
const NODE_FLOOR = 1;
const NODE_CGROUP_FLOOR = 2;
const Q = 'start';
const SCRIPT = '#!/bin/bash\necho "$EPOCHREALTIME" >"$BENCH_FIFO"\necho "done ok" >&3\n';
const run = promisify(execFile);

interface Sample {
  start: number;
  observed: number;
  ack?: number;
  /** The floor's own split of start: its append with the fdatasync, and posix_spawn until it returned. */
  sync?: number;
  spawn?: number;
}

async function floorRounds(bin: string, script: string, journal: string, fifo: string, n: number): Promise<Sample[]> {
  const { stdout } = await run(bin, [script, journal, String(n)], { env: { ...process.env, BENCH_FIFO: fifo }, timeout: 120_000 });
  return stdout
    .trim()
    .split('\n')
    .map((l) => {
      const [start, observed, sync, spawn] = l.split(' ').map(Number);
      return { start, observed, sync, spawn };
    });
}

/** One create on a fresh connection, timed to the script's line; resolves once the message is done. */
async function rqRound(sock: string, lines: FifoLines): Promise<Sample> {
  const line = lines.next();
  const t0 = nowMs();
  const m0 = performance.now();
  const created = await QueueClient.oneShot(sock).create({ dest: Q });
  const ack = performance.now() - m0;
  if (!created.ok) throw new Error(`create_message: ${created.text}`);
  const l = await line;
  const id = created.value.split('/').pop()!;
  const finished = await QueueClient.oneShot(sock, { timeoutMs: 15_000 }).waitFinished(id, 10);
  if (!finished.ok || finished.value.state !== 'done') throw new Error(`${id} did not finish: ${JSON.stringify(finished.raw)}`);
  return { start: Number(l.text) * 1000 - t0, observed: l.at - m0, ack };
}

/** One create_message to the socket floor on a fresh connection, timed to the script's line; the floor answers once the run is reaped. */
async function socketRound(sock: string, lines: FifoLines): Promise<Sample> {
  const line = lines.next();
  const t0 = nowMs();
  const m0 = performance.now();
  const created = await QueueClient.oneShot(sock).create({ dest: Q });
  if (!created.ok) throw new Error(`socket floor: ${created.text}`);
  const l = await line;
  return { start: Number(l.text) * 1000 - t0, observed: l.at - m0 };
}

interface SocketFloor {
  sock: string;
  lines: FifoLines;
  samples: Sample[];
  close(): Promise<void>;
}

/** A floor server `bin args SOCKET rest` with its own FIFO for the script's line. */
async function socketFloor(dir: string, name: string, bin: string, args: string[], rest: string[] = []): Promise<SocketFloor> {
  const fifo = path.join(dir, `${name}.fifo`);
  const lines = FifoLines.open(fifo);
  const sock = path.join(dir, `${name}.sock`);
  const server = await startFloorServer(bin, [...args, sock, ...rest], { ...process.env, BENCH_FIFO: fifo });
  return { sock, lines, samples: [], close: async () => (lines.close(), await server.stop()) };
}

/**
 * A cgroup v2 directory for the Node floor's run cgroups, beside where the queue makes its own; null where rq would
 * give runs none (no writable cgroup2, RQ_CGROUP=off, or a build whose spawner cannot start into a cgroup: x86-64 only).
 */
function floorCgroupParent(): string | null {
  const home = ownCgroupHome();
  if (!home.ok || process.env.RQ_CGROUP === 'off' || process.arch !== 'x64') return null;
  const dir = path.join(queuesHome(home.dir), `rq-bench-floor-${process.pid}`);
  try {
    fsSync.mkdirSync(dir);
    return dir;
  } catch {
    return null;
  }
}

const stats = (xs: number[]) => ({ median: round(median(xs)), p90: round(quantile(xs, 0.9)), p99: round(quantile(xs, 0.99)) });

const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const rq: Sample[] = [];
const floor: Sample[] = [];
const sockets: SocketFloor[] = [];
let floorMissing: string | undefined;
/** The queue process's CPU (all its threads) over the rq rounds: a create, its start, its run's end and the bench's wait. */
let rqCpuMs = 0;
const cgroupParent = floorCgroupParent();
try {
  const script = await writeScript(dir, SCRIPT);
  const built = await buildC('spawn-floor', dir);
  const rqLines = FifoLines.open(path.join(dir, 'rq.fifo'));
  const floorFifo = path.join(dir, 'floor.fifo');
  // The floor opens its own FIFO: two readers of one FIFO would take each other's lines.
  await run('mkfifo', [floorFifo]);
  const journal = path.join(dir, 'floor.journal');
  // The same round behind a socket: in C (spawn-floor.c --socket), and in a bare Node process with rq's spawner (NODE_FLOOR).
  if ('bin' in built) {
    const node = [fileURLToPath(new URL('fixtures/spawn-floor-node.mjs', import.meta.url)), script, path.join(dir, 'node.journal')];
    sockets.push(await socketFloor(dir, 'c', built.bin, [script, path.join(dir, 'c.journal'), '--socket']));
    sockets.push(await socketFloor(dir, 'node', process.execPath, node, [ADDON_PATH]));
    if (cgroupParent) sockets.push(await socketFloor(dir, 'node-cgroup', process.execPath, node, [ADDON_PATH, cgroupParent]));
  }
  const socketBlock = async (n: number) => {
    for (const f of sockets) for (let i = 0; i < n; i++) f.samples.push(await socketRound(f.sock, f.lines));
  };
  const lq = await liveQueue(Q, { script, num_workers: 1, env_vars: { BENCH_FIFO: path.join(dir, 'rq.fifo') } });
  try {
    const floorBlock = async (n: number) => ('bin' in built ? floorRounds(built.bin, script, journal, floorFifo, n) : []);
    // Warm-up, not counted.
    for (let i = 0; i < WARMUP; i++) await rqRound(lq.q.paths.sock, rqLines);
    await floorBlock(C_WARMUP);
    for (const [i, f] of sockets.entries())
      for (let n = 0; n < (i === NODE_FLOOR || i === NODE_CGROUP_FLOOR ? WARMUP : C_WARMUP); n++) await socketRound(f.sock, f.lines);
    const per = Math.ceil(ROUNDS / BLOCKS);
    for (let b = 0; b < BLOCKS; b++) {
      const cpu0 = await cpuMs(lq.q.pid);
      for (let i = 0; i < per; i++) {
        if (GAP_MS > 0) await new Promise((r) => setTimeout(r, GAP_MS));
        rq.push(await rqRound(lq.q.paths.sock, rqLines));
      }
      rqCpuMs += (await cpuMs(lq.q.pid)) - cpu0;
      floor.push(...(await floorBlock(per)));
      await socketBlock(per);
    }
    if ('missing' in built) floorMissing = built.missing;
  } finally {
    rqLines.close();
    await lq.close();
  }
} finally {
  for (const f of sockets) await f.close().catch((err: Error) => console.error(`stopping a floor: ${err.message}`));
  // With the cgroups a failed round left inside it; a failure here is said, not put in place of the bench's own.
  if (cgroupParent) await removeTree(cgroupParent).catch((err: Error) => console.error(`removing ${cgroupParent}: ${err.message}`));
  await fs.rm(dir, { recursive: true, force: true });
}
const rqMedian = median(rq.map((s) => s.start));
const floorMedian = floor.length ? median(floor.map((s) => s.start)) : undefined;
const [cSocket, nodeSocket, nodeCgroupSocket] = sockets.map((f) => f.samples.map((s) => s.start));
const socketMedian = cSocket?.length ? median(cSocket) : undefined;
const nodeMedian = nodeSocket?.length ? median(nodeSocket) : undefined;
const overFloor = floorMedian === undefined ? undefined : rqMedian - floorMedian;
/** What a fresh cgroup per run costs a start in the kernel (its mkdir and the clone3 into it; the rmdir comes after the start), from the two Node floors. */
const cgroupCost = nodeCgroupSocket?.length && nodeMedian !== undefined ? median(nodeCgroupSocket) - nodeMedian : undefined;
const overCgroupFloor = overFloor === undefined || cgroupCost === undefined ? undefined : overFloor - cgroupCost;
console.log(
  JSON.stringify({
    bench: 'start-latency',
    rounds: rq.length,
    warmup_rounds: { rq: WARMUP, floor_node_socket: WARMUP, ...(cgroupParent ? { floor_node_cgroup_socket: WARMUP } : {}), floor_c: C_WARMUP },
    // Whether the Node floor ran with run cgroups too (the queue's own choice is in its log: `each script runs in a cgroup of its own`).
    floor_run_cgroups: cgroupParent !== null,
    blocks: BLOCKS,
    gap_ms: GAP_MS,
    rq_connect_to_start_ms: stats(rq.map((s) => s.start)),
    rq_connect_to_ok_ms: stats(rq.map((s) => s.ack!)),
    // The script ran before the client had its `ok` (the create is runnable before its journal fdatasync).
    rq_started_before_ok: round(rq.filter((s) => s.start < s.ack!).length / rq.length),
    rq_observed_ms: stats(rq.map((s) => s.observed)),
    rq_queue_cpu_ms_per_message: round(rqCpuMs / rq.length),
    floor_start_ms: floor.length ? stats(floor.map((s) => s.start)) : null,
    floor_sync_ms: floor.length ? stats(floor.map((s) => s.sync!)) : null,
    floor_spawn_ms: floor.length ? stats(floor.map((s) => s.spawn!)) : null,
    // What is left is the script's own start: bash from its exec to its first line.
    floor_script_ms: floor.length ? stats(floor.map((s) => s.start - s.sync! - s.spawn!)) : null,
    floor_observed_ms: floor.length ? stats(floor.map((s) => s.observed)) : null,
    // The same round behind the socket, sent by the same client: the least any daemon's connect → start could be.
    floor_socket_start_ms: cSocket?.length ? stats(cSocket) : null,
    // The same in a bare Node process with rq's native spawner: what the runtime costs before any of rq's own work.
    floor_node_socket_start_ms: nodeSocket?.length ? stats(nodeSocket) : null,
    // The Node floor with a fresh cgroup per round, as rq's runs have: null where rq gives runs none.
    floor_node_cgroup_socket_start_ms: nodeCgroupSocket?.length ? stats(nodeCgroupSocket) : null,
    run_cgroup_cost_ms: cgroupCost === undefined ? null : round(cgroupCost),
    ...(floorMissing ? { floor_skipped: floorMissing } : {}),
    median_minus_floor_ms: overFloor === undefined ? null : round(overFloor),
    socket_floor_minus_floor_ms: socketMedian === undefined || floorMedian === undefined ? null : round(socketMedian - floorMedian),
    median_minus_socket_floor_ms: socketMedian === undefined ? null : round(rqMedian - socketMedian),
    node_socket_floor_minus_floor_ms: nodeMedian === undefined || floorMedian === undefined ? null : round(nodeMedian - floorMedian),
    median_minus_node_socket_floor_ms: nodeMedian === undefined ? null : round(rqMedian - nodeMedian),
    target: { median_minus_floor_ms: 0.5 },
    target_met: overFloor === undefined ? null : overFloor <= 0.5,
    // Against the C floor plus the kernel's cost of the run cgroup, the work rq cannot leave out while it gives each run one.
    median_minus_floor_and_run_cgroup_ms: overCgroupFloor === undefined ? null : round(overCgroupFloor),
    target_met_with_run_cgroup: overCgroupFloor === undefined ? null : overCgroupFloor <= 0.5,
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
