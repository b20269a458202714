// Latency from commit to script start on an idle queue (median, p99), next to the latency of a bare
// spawn of the same script in the same run. The script reports $EPOCHREALTIME as its first act.
// The commit goes over an open connection, as the web process and the timers send theirs (a new
// Unix socket connection per request would add ~0.5 ms of client-side setup to every sample).
// Run: npx vite-node bench/dispatch.ts   (prints one JSON object)
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { liveQueue, median, quantile, round, writeScript } from './lib.js';
import { waitFor } from '../test/helpers/rq-root.js';
import { SocketConnection } from '../src/ipc/socket-client.js';

const N = Number(process.env.BENCH_N ?? 200);
const SCRIPT = '#!/bin/bash\necho "done $EPOCHREALTIME" >&3\n';
const nowMs = () => performance.timeOrigin + performance.now();

async function rawSpawnLatency(script: string, cwd: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = nowMs();
    const started = await new Promise<number>((resolve) => {
      const c = spawn(script, [], { cwd, stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true });
      let line = '';
      c.stdio[3]!.on('data', (d) => (line += d));
      c.on('close', () => resolve(Number(line.trim().split(' ')[1]) * 1000));
    });
    out.push(started - t0);
  }
  return out;
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const script = await writeScript(dir, SCRIPT);
const raw = await rawSpawnLatency(script, dir);
const lq = await liveQueue('lat', { script, num_workers: 1 });
const lat: number[] = [];
const conn = await SocketConnection.open(lq.q.paths.sock, 'rq1', { timeoutMs: 10_000 });
try {
  for (let i = 0; i < N; i++) {
    const id = String((await lq.q.cmd('prep_message', { dest: 'lat' }))[1])
      .split('/')
      .pop()!;
    const t0 = nowMs();
    const r = await conn.request(`commit_message ${JSON.stringify({ msg_id: id })}`);
    if (!r.startsWith('["ok"')) throw new Error(`commit_message: ${r}`);
    await waitFor(async () => (await lq.q.state(id)) === 'done', 'done', 10_000, 1);
    const st = await lq.q.cmd('get_message_status', { msg_id: id });
    lat.push(Number(String(st[1].status).split(' - ')[1]) * 1000 - t0);
  }
} finally {
  conn.close();
  await lq.close();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    bench: 'dispatch',
    samples: N,
    commit_to_start_ms: { median: round(median(lat)), p99: round(quantile(lat, 0.99)) },
    raw_spawn_to_start_ms: { median: round(median(raw)), p99: round(quantile(raw, 0.99)) },
    overhead_median_ms: round(median(lat) - median(raw)),
    target: { median_ms: 3 },
  }),
);
