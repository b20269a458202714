// What one start through rq's native spawner (src/queue/launch/native/rq-spawn.c) costs, beside a C posix_spawn floor: how
// long the spawn call holds the queue's event loop, and when the script's first line runs, for a plain vfork and for a
// clone3 into a fresh run cgroup (as each run gets), in alternating rounds. The script writes $EPOCHREALTIME to its fd 3.
// The floor, in alternating blocks: bench/fixtures/spawn-floor.c's posix_spawn of the same script (writing its line to a
// FIFO instead), its call and the line timed from after its journal append (so its line also carries the making of its
// two pipes, which the rows of rq's spawner make before their clock starts: the floor is the slower by those ~20 µs).
// Needs a cgroup v2 this process may make cgroups in (root on this machine); else the cgroup rows say why they are missing.
// Run: npm run build && npm run -s bench bench/spawn-cost.ts   (BENCH_ROUNDS, default 200; prints one JSON object)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ADDON_PATH, type SpawnAddon } from '../src/queue/launch/native-launcher.js';
import { ownCgroupHome } from '../src/queue/launch/cgroup-fs.js';
import { buildC, loadavg, median, nowMs, quantile, round } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const BLOCKS = 4;
const WARMUP = 20;
const addon = createRequire(import.meta.url)(ADDON_PATH) as SpawnAddon;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-bench-'));
const script = path.join(dir, 'first-line.sh');
fs.writeFileSync(script, '#!/bin/bash\necho "$EPOCHREALTIME" >&3\n', { mode: 0o755 });
const devNull = fs.openSync('/dev/null', 'r');
// Converted once, as a queue converts the variables its runs share.
const env = addon.envBlock(Object.entries(process.env).map(([k, v]) => `${k}=${v}`));

/** Where run cgroups can be made here, or why not. */
function cgroupParent(): { dir: string } | { missing: string } {
  const home = ownCgroupHome();
  if (!home.ok) return { missing: home.why };
  const parent = path.join(home.dir, `rq-bench-spawn-${process.pid}`);
  try {
    fs.mkdirSync(parent);
    return { dir: parent };
  } catch (err) {
    return { missing: `cannot make ${parent}: ${(err as Error).message}` };
  }
}

/** One start: ms the spawn call took, ms from before it to the script's first line. */
async function start(cgroup: string | null): Promise<{ call: number; first: number }> {
  const [fromFd, childWrite, childRead, toFd] = [...addon.pipe(), ...addon.pipe()];
  let exited!: () => void;
  const gone = new Promise<void>((r) => (exited = r));
  const t0 = nowMs();
  const m0 = performance.now();
  addon.spawn(script, [script], env, [], dir, [devNull, devNull, devNull, childWrite, childRead], 0, null, null, -1, cgroup, [], () => exited());
  const call = performance.now() - m0;
  fs.closeSync(childWrite);
  fs.closeSync(childRead);
  await gone;
  const buf = Buffer.alloc(64);
  const line = buf.toString('utf8', 0, fs.readSync(fromFd, buf));
  const first = parseFloat(line) * 1000 - t0;
  if (!Number.isFinite(first)) throw new Error(`the script wrote ${JSON.stringify(line)}, not its start time`);
  fs.closeSync(fromFd);
  fs.closeSync(toFd);
  return { call, first };
}

/** n rounds of the C floor: posix_spawn's call and the script's line, both from after the floor's append. */
function floorRounds(bin: string, n: number): { call: number; first: number }[] {
  const fifo = path.join(dir, 'floor.fifo');
  const floorScript = path.join(dir, 'floor-line.sh');
  if (!fs.existsSync(fifo)) execFileSync('mkfifo', [fifo]);
  fs.writeFileSync(floorScript, '#!/bin/bash\necho "$EPOCHREALTIME" >"$BENCH_FIFO"\n', { mode: 0o755 });
  const out = execFileSync(bin, [floorScript, path.join(dir, 'floor.journal'), String(n)], { env: { ...process.env, BENCH_FIFO: fifo }, encoding: 'utf8' });
  return out
    .trim()
    .split('\n')
    .map((l) => l.split(' ').map(Number))
    .map(([start, , sync, spawn]) => ({ call: spawn, first: start - sync }));
}

const load0 = await loadavg();
const cg = cgroupParent();
const built = await buildC('spawn-floor', dir);
const sides = {
  vfork: [] as { call: number; first: number }[],
  cgroup: [] as { call: number; first: number }[],
  floor: [] as { call: number; first: number }[],
};
try {
  if ('bin' in built) floorRounds(built.bin, WARMUP);
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    if ('bin' in built && i > WARMUP && (i - WARMUP) % Math.ceil(ROUNDS / BLOCKS) === 0)
      sides.floor.push(...floorRounds(built.bin, Math.ceil(ROUNDS / BLOCKS)));
    const plain = await start(null);
    let inCgroup: { call: number; first: number } | null = null;
    if ('dir' in cg) {
      const run = path.join(cg.dir, `run-${i}`);
      fs.mkdirSync(run);
      inCgroup = await start(run);
      fs.rmdirSync(run);
    }
    if (i < WARMUP) continue;
    sides.vfork.push(plain);
    if (inCgroup) sides.cgroup.push(inCgroup);
  }
  if ('bin' in built) sides.floor.push(...floorRounds(built.bin, Math.ceil(ROUNDS / BLOCKS)));
} finally {
  if ('dir' in cg) fs.rmdirSync(cg.dir);
  fs.rmSync(dir, { recursive: true, force: true });
}
const stats = (xs: number[]) => (xs.length ? { median: round(median(xs), 3), p90: round(quantile(xs, 0.9), 3) } : null);
const side = (s: { call: number; first: number }[]) => ({ call_ms: stats(s.map((x) => x.call)), first_line_ms: stats(s.map((x) => x.first)) });
console.log(
  JSON.stringify({
    bench: 'spawn-cost',
    rounds: ROUNDS,
    floor_posix_spawn: 'bin' in built ? side(sides.floor) : { skipped: built.missing },
    vfork: side(sides.vfork),
    fresh_cgroup: 'dir' in cg ? side(sides.cgroup) : { skipped: cg.missing },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
