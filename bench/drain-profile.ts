// Where a drained message's time goes in the queue process: two drains of BENCH_N preloaded messages (default
// 1,000, num_workers 1, the `done ok` bash script). The first runs the queue under V8's CPU profiler and
// charges each sample to the source module it fell in (the bundle's `// src/...` markers), to V8's
// collector, or to idle; the second under `strace -f -c` counts the system calls of every thread per message.
// The profiler and strace each slow the drain: read this for shares and counts, bench/drain.ts for rates.
// Run: npm run build && npm run -s bench bench/drain-profile.ts   (prints one JSON object)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DONE_SCRIPT, enqueue, liveQueue, loadavg, round, waitCounts, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 1000);
const BUNDLE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'queue', 'queue-main.js');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Drains N messages through a fresh queue started with `env`; `during` runs with the queue's pid while it drains. */
async function drainOnce(script: string, env: NodeJS.ProcessEnv, during?: (pid: number) => Promise<() => Promise<void>>): Promise<number> {
  const lq = await liveQueue('profiled', { script, num_workers: 1 }, env);
  try {
    await fs.writeFile(lq.pauseFile, '');
    await enqueue(lq.q, N, 16);
    const done = await during?.(lq.q.pid);
    const t0 = performance.now();
    await fs.rm(lq.pauseFile);
    const t1 = await waitCounts(lq.q, (n) => n.done === N);
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

/** Self time of every sample, in ms, by where it fell. */
function charge(profile: Profile, moduleAt: (line: number) => string): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const f = nodes.get(id)!;
    const where = f.url.endsWith('queue-main.js') ? moduleAt(f.lineNumber) : f.url ? f.url.replace(/^node:internal\/([^/]+).*/, 'node:$1') : f.functionName;
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
  const profiledMs = await drainOnce(script, { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` });
  const [file] = await fs.readdir(profDir);
  const profile = JSON.parse(await fs.readFile(path.join(profDir, file), 'utf8')) as Profile;
  const byPlace = [...charge(profile, await moduleOfLine()).entries()].sort((a, b) => b[1] - a[1]);
  const total = byPlace.filter(([k]) => k !== '(idle)').reduce((s, [, ms]) => s + ms, 0);

  const straceOut = path.join(dir, 'strace.txt');
  const stracedMs = await drainOnce(script, {}, async (pid) => {
    const tracer = spawn('strace', ['-f', '-c', '-o', straceOut, '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
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
