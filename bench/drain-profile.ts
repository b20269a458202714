// Where a drained message's time goes in the queue process: two drains of BENCH_N preloaded messages (default
// 1,000, num_workers BENCH_WORKERS (default 1), the `done ok` bash script). The first runs the queue under V8's CPU profiler and
// charges each sample to the source module it fell in (the bundle's `// src/...` markers), to V8's
// collector, or to idle; the second under `strace -c` counts the system calls of its threads per message.
// The profiler and strace each slow the drain: read this for shares and counts, bench/drain.ts for rates.
// BENCH_ONE_AT_A_TIME=1 sends the messages one by one to the idle queue instead, each once the one before has
// finished, as bench/start-latency.ts does: what each message costs when nothing shares its syncs or its JIT.
// Run: npm run build && npm run -s bench bench/drain-profile.ts   (prints one JSON object)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DONE_SCRIPT, enqueue, liveQueue, loadavg, round, waitDrained, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 1000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const ONE_AT_A_TIME = process.env.BENCH_ONE_AT_A_TIME === '1';
const BUNDLE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'queue', 'queue-main.js');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Drains N messages through a fresh queue started through `wrap` (QueueProc.start); `during` runs with the queue's pid while it drains. */
async function drainOnce(script: string, wrap: string[] | undefined, during?: (pid: number) => Promise<() => Promise<void>>): Promise<number> {
  const lq = await liveQueue('profiled', { script, num_workers: WORKERS }, wrap);
  try {
    if (ONE_AT_A_TIME) {
      const done = await during?.(lq.q.pid);
      const t0 = performance.now();
      for (let i = 0; i < N; i++) {
        const [id] = await enqueue(lq.q, 1, 1);
        const r = await lq.q.cmd('wait_message', { msg_id: id, timeout: 60 });
        if (r[0] !== 'ok') throw new Error(`wait_message ${id}: ${JSON.stringify(r)}`);
      }
      await done?.();
      return performance.now() - t0;
    }
    await fs.writeFile(lq.pauseFile, '');
    const ids = await enqueue(lq.q, N, 16);
    const done = await during?.(lq.q.pid);
    const t0 = performance.now();
    await fs.rm(lq.pauseFile);
    const t1 = await waitDrained(lq.q, ids);
    await done?.();
    return t1 - t0;
  } finally {
    await lq.close();
  }
}

/** The source module of each line of the bundle, from esbuild's `// src/<path>` markers. */
async function moduleOfLine(): Promise<(line: number) => string> {
  const lines = (await fs.readFile(BUNDLE, 'utf8')).split('\n');
  const starts: [number, string][] = [];
  lines.forEach((l, i) => {
    const m = /^\/\/ ((?:src|node_modules)\/.+)$/.exec(l);
    if (m) starts.push([i, m[1].replace(/^node_modules\/([^/]+)\/.*/, 'node_modules/$1')]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 'bundle prelude' : starts[lo - 1][1];
  };
}

/**
 * Self time of every sample, in ms, charged to the rq module whose code ran or called it: a sample in
 * node's own code or a native call (a synchronous `open`, a `rename`) goes to the nearest caller in the
 * bundle, named with the leaf (`src/spool/blanks.ts → mkdir`); the rest to V8's own entries.
 */
function charge(profile: Profile, moduleAt: (line: number) => string): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const place = new Map<number, string>();
  const placeOf = (id: number): string => {
    const known = place.get(id);
    if (known) return known;
    const leaf = byId.get(id)!.callFrame;
    let at: number | undefined = id;
    while (at !== undefined && !byId.get(at)!.callFrame.url.endsWith('queue-main.js')) at = parent.get(at);
    const where =
      at === id
        ? moduleAt(leaf.lineNumber)
        : at !== undefined
          ? `${moduleAt(byId.get(at)!.callFrame.lineNumber)} → ${leaf.url ? leaf.url.replace(/^node:internal\/([^/]+).*/, 'node:$1') : leaf.functionName}`
          : leaf.functionName || leaf.url;
    place.set(id, where);
    return where;
  };
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const where = placeOf(id);
    out.set(where, (out.get(where) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return out;
}

/** strace's summary table: calls and seconds of each system call. */
function parseStrace(text: string): { call: string; calls: number; seconds: number }[] {
  return text
    .split('\n')
    .map((l) => /^\s*[\d.]+\s+([\d.]+)\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && m[3] !== 'total')
    .map((m) => ({ call: m[3], calls: Number(m[2]), seconds: Number(m[1]) }));
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  const profDir = path.join(dir, 'prof');
  const load = await loadavg();
  // Node refuses --cpu-prof in NODE_OPTIONS: a shell puts it on the command line and execs node, so the pid stays the queue's.
  const profiledMs = await drainOnce(script, ['sh', '-c', `exec "$0" --cpu-prof --cpu-prof-dir=${profDir} "$@"`]);
  const [file] = await fs.readdir(profDir);
  const profile = JSON.parse(await fs.readFile(path.join(profDir, file), 'utf8')) as Profile;
  const byPlace = [...charge(profile, await moduleOfLine()).entries()].sort((a, b) => b[1] - a[1]);
  const total = byPlace.filter(([k]) => k !== '(idle)').reduce((s, [, ms]) => s + ms, 0);

  const straceOut = path.join(dir, 'strace.txt');
  const stracedMs = await drainOnce(script, undefined, async (pid) => {
    // Every thread of the queue (the main thread and libuv's pool), not the scripts it forks: no -f.
    const tids = await fs.readdir(`/proc/${pid}/task`);
    const tracer = spawn('strace', ['-c', '-o', straceOut, ...tids.flatMap((t) => ['-p', t])], { stdio: ['ignore', 'ignore', 'pipe'] });
    // strace says "Process N attached" on stderr for each thread once it traces it.
    await new Promise<void>((resolve, reject) => {
      tracer.once('error', reject);
      tracer.stderr.on('data', (b: Buffer) => b.includes(`Process ${pid} attached`) && resolve());
    });
    return async () => {
      tracer.kill('SIGINT');
      await new Promise((r) => tracer.once('exit', r));
    };
  });
  const calls = parseStrace(await fs.readFile(straceOut, 'utf8')).sort((a, b) => b.calls - a.calls);
  console.log(
    JSON.stringify({
      bench: 'drain-profile',
      messages: N,
      one_at_a_time: ONE_AT_A_TIME,
      workers: WORKERS,
      loadavg: load,
      profiled_drain_per_s: round(N / (profiledMs / 1000)),
      js_busy_ms_per_msg: round(total / N, 3),
      js_ms_per_msg_by_place: Object.fromEntries(byPlace.slice(0, 30).map(([k, ms]) => [k, round(ms / N, 4)])),
      straced_drain_per_s: round(N / (stracedMs / 1000)),
      syscalls_per_msg: Object.fromEntries(calls.slice(0, 30).map((c) => [c.call, { calls: round(c.calls / N, 2), us: round((c.seconds * 1e6) / N, 1) }])),
    }),
  );
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
