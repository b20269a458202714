// Where a socket create's CPU goes, in the queue and in its Node floor (bench/fixtures/enqueue-floor-node.mjs),
// measured with the kernel's sampler: 4 clients (BENCH_CLIENTS) each with one request in flight create BENCH_N
// messages (default 20,000) in a paused queue, and as many through the Node floor, in alternating blocks of the
// same run, each block under `perf record -g` of that one process (BENCH_HZ samples a second, default 4,000), both
// started with --perf-basic-prof so JavaScript frames have names. Each sample is charged to its thread (the main
// thread, or the others: libuv's pool, V8's helpers) and to the system call it is in, or to V8's collector, its
// compilers, the kernel outside any call (scheduling, interrupts), or `user` (JavaScript, V8's runtime, libc).
// The figures are µs of CPU a create. perf slows both sides alike: read shares and differences, not rates.
// Needs perf (Debian: apt-get install linux-perf) and the right to trace the processes (root).
// Run: npm run build && npm run -s bench bench/enqueue-cpu.ts   (prints one JSON object)
import { execFile, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startFloorServer, type FloorServer } from './floor-server.js';
import { connectedClient, liveQueue, loadavg, round, runLanes } from './lib.js';

const N = Number(process.env.BENCH_N ?? 20_000);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 4);
const HZ = Number(process.env.BENCH_HZ ?? 4000);
const BLOCKS = 4;
const Q = 'enq';
const FIELDS = { dest: Q, src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/** Node's flags for named JavaScript frames; --perf-basic-prof also starts V8's log, kept in `dir`, not the cwd. */
const perfFlags = (dir: string, who: string) => ['--perf-basic-prof', `--logfile=${path.join(dir, `${who}-v8.log`)}`, '--no-logfile-per-isolate'];

type Tally = Map<string, number>;
interface Side {
  main: Tally;
  others: Tally;
  /** Main-thread samples under each JavaScript function (inclusive: a sample counts once for every function on its stack). */
  js: Tally;
  creates: number;
}

/** The category of one sample, from its frames (leaf first): the system call it is in, or what ran. */
function category(frames: string[]): string {
  for (const f of frames) {
    const sys = /__x64_sys_(\w+)/.exec(f);
    if (sys) return `sys_${sys[1]}`;
  }
  if (frames[0]?.includes('[kernel.kallsyms]')) return 'kernel_other';
  if (frames.some((f) => /Scaveng|MarkCompact|MinorMark|Heap::|GCTracer/.test(f))) return 'gc';
  if (frames.some((f) => /v8::internal::(compiler|maglev|baseline)::|Compiler::|Parser/.test(f))) return 'compile';
  return 'user';
}

/** Adds `perf script -F tid,ip,sym,dso` output to `side`: samples of thread `mainTid` to main, the rest to others. */
function tally(script: string, mainTid: number, side: Side): void {
  let tid = -1;
  let frames: string[] = [];
  const flush = () => {
    if (tid < 0) return;
    const t = tid === mainTid ? side.main : side.others;
    const c = category(frames);
    t.set(c, (t.get(c) ?? 0) + 1);
    if (tid !== mainTid) return;
    const seen = new Set<string>();
    for (const f of frames) {
      // `JS:*create file:///…/queue-main.js:11922:15 (/tmp/perf-<pid>.map)`: name (or anonymous), file's last part and line.
      const js = /JS:[*~^+]?(\S*) (?:file:\/\/)?(?:\S*\/)?([^/\s]+?:\d+|[^/\s:]+)/.exec(f);
      if (js) seen.add(`${js[1] || '(anonymous)'} ${js[2]}`);
    }
    for (const k of seen) side.js.set(k, (side.js.get(k) ?? 0) + 1);
  };
  for (const line of script.split('\n')) {
    const head = /^\s*(\d+)\s*$/.exec(line);
    if (head) {
      flush();
      tid = Number(head[1]);
      frames = [];
    } else if (line.trim()) frames.push(line.trim());
  }
  flush();
}

/** Runs `work` with `pid` sampled by perf (enabled and disabled through its control fifos, so only the work is seen). */
async function profiled(pid: number, dir: string, work: () => Promise<void>): Promise<string> {
  const ctl = path.join(dir, 'perf-ctl');
  const ack = path.join(dir, 'perf-ack');
  const out = path.join(dir, 'perf.data');
  for (const f of [ctl, ack]) {
    await fs.rm(f, { force: true });
    if (spawnSync('mkfifo', [f]).status !== 0) throw new Error(`mkfifo ${f} failed`);
  }
  const perf = spawn('perf', ['record', '-q', '-F', String(HZ), '-g', '-D', '-1', '--control', `fifo:${ctl},${ack}`, '-o', out, '-p', String(pid)], {
    stdio: 'inherit',
  });
  const exited = once(perf, 'exit');
  const ctlFd = await fs.open(ctl, 'w');
  const ackFd = await fs.open(ack, 'r');
  const command = async (c: string) => {
    await ctlFd.write(`${c}\n`);
    const { bytesRead, buffer } = await ackFd.read(Buffer.alloc(16), 0, 16);
    if (!buffer.subarray(0, bytesRead).toString().startsWith('ack')) throw new Error(`perf did not acknowledge ${c}`);
  };
  try {
    await command('enable');
    await work();
    await command('disable');
  } finally {
    perf.kill('SIGINT');
    await exited;
    await ctlFd.close();
    await ackFd.close();
  }
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', out, '-F', 'tid,ip,sym,dso'], { maxBuffer: 1 << 30 });
  return stdout;
}

/** µs of CPU a create by category, largest first, those under 0.5 µs summed as `rest` (or left out, `top` given: the `top` largest). */
function perCreate(t: Tally, creates: number, top?: number): Record<string, number> {
  const us = (samples: number) => (samples / HZ / creates) * 1e6;
  const all = [...t.entries()].sort((a, b) => b[1] - a[1]);
  if (top) return Object.fromEntries(all.slice(0, top).map(([k, n]) => [k, round(us(n), 1)]));
  const out: Record<string, number> = { total: round(us(all.reduce((s, [, n]) => s + n, 0)), 1) };
  let rest = 0;
  for (const [k, n] of all) {
    if (us(n) >= 0.5) out[k] = round(us(n), 1);
    else rest += us(n);
  }
  if (rest) out.rest = round(rest, 1);
  return out;
}

if (spawnSync('perf', ['--version']).status !== 0) throw new Error('bench/enqueue-cpu.ts needs perf (Debian: apt-get install linux-perf)');
const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
// A wrap for QueueProc.start: execs node (its first argument) with the flags before the rest, so the pid stays the queue's.
const lq = await liveQueue(Q, { num_workers: 1 }, ['sh', '-c', `n=$1; shift; exec "$n" ${perfFlags(dir, 'queue').join(' ')} "$@"`, 'sh']);
let floor: FloorServer | undefined;
const conns: Awaited<ReturnType<typeof connectedClient>>[] = [];
try {
  await fs.writeFile(lq.pauseFile, '');
  const floorSock = path.join(dir, 'node.sock');
  const fixture = fileURLToPath(new URL('fixtures/enqueue-floor-node.mjs', import.meta.url));
  const sample = await (await connectedClient(lq.q.paths.sock)).client.create(FIELDS);
  if (!sample.ok) throw new Error(`create_message: ${sample.text}`);
  const msgBytes = (await fs.stat(path.join(lq.q.paths.state.que, sample.value.split('/').pop()!, 'msg'))).size;
  floor = await startFloorServer(process.execPath, [...perfFlags(dir, 'floor'), fixture, floorSock, path.join(dir, 'node'), String(msgBytes)]);
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
  const result: Side[] = sides.map(() => ({ main: new Map(), others: new Map(), js: new Map(), creates: 0 }));
  const per = Math.ceil(N / BLOCKS);
  const seconds = [0, 0];
  for (let b = 0; b < BLOCKS; b++) {
    for (const k of [0, 1]) {
      let s = 0;
      const script = await profiled(sides[k].pid, dir, async () => {
        const t0 = performance.now();
        await creates(k, per);
        s = (performance.now() - t0) / 1000;
      });
      tally(script, sides[k].pid, result[k]);
      result[k].creates += per;
      seconds[k] += s;
    }
  }
  const report = (k: number) => ({
    creates_per_s_sampled: Math.round(result[k].creates / seconds[k]),
    main_thread_us: perCreate(result[k].main, result[k].creates),
    other_threads_us: perCreate(result[k].others, result[k].creates),
    main_thread_js_us: perCreate(result[k].js, result[k].creates, 20),
  });
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
  await lq.close();
  await fs.rm(dir, { recursive: true, force: true });
  // The symbol maps --perf-basic-prof wrote for perf.
  for (const pid of [lq.q.pid, floor?.pid]) await fs.rm(`/tmp/perf-${pid}.map`, { force: true });
}
