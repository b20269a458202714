// Commit-to-start latency with 0 and with 10,000 messages pending under the job features (retries
// waiting for their backoff, expiry deadlines, priorities): dispatch must stay O(log n), so the two
// medians should match. A bare spawn of the same script in the same run is the baseline.
// Run: npx vite-node bench/pending-dispatch.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { median, quantile, round, runLanes, spawnFloor, writeScript } from './lib.js';
import { QueueProc, addQueue, makeRoot, waitFor } from '../test/helpers/rq-root.js';
import { SocketConnection } from '../src/ipc/socket-client.js';
import { QueueSpool } from '../src/spool/queue-spool.js';

const PENDING = Number(process.env.BENCH_PENDING ?? 10_000);
const N = Number(process.env.BENCH_N ?? 200);
const SCRIPT = '#!/bin/bash\necho "done $EPOCHREALTIME" >&3\n';
const nowMs = () => performance.timeOrigin + performance.now();

/** Pending work as a day of retries and deadlines leaves it: due later, with max_age, failures and priorities. */
async function fill(root: string, port: number, count: number): Promise<void> {
  const spool = new QueueSpool(root, 'pd', { host: { host: '127.0.0.1', port, root: '/' } });
  const later = Math.floor(Date.now() / 1000) + 3600;
  let i = 0;
  await runLanes(count, 32, async () => {
    const n = i++;
    await spool.create(
      { dest: 'pd', due: later + (n % 600), max_age: 86_400, max_retries: 5, priority: (n % 7) - 3 },
      { commit: true, extra: { failures: 1 + (n % 4) } },
    );
  });
  await spool.close();
}

async function latencies(pending: number, script: string): Promise<{ median: number; p99: number; load_ms: number }> {
  const t = await makeRoot();
  try {
    await addQueue(t.root, 'pd', { script, num_workers: 1 });
    if (pending) await fill(t.root, t.port, pending);
    const t0 = Date.now();
    const q = await QueueProc.start(t.root, 'pd');
    const loadMs = Date.now() - t0;
    const conn = await SocketConnection.open(q.paths.sock, 'rq1', { timeoutMs: 10_000 });
    const lat: number[] = [];
    try {
      for (let i = 0; i < N; i++) {
        const id = String((await q.cmd('prep_message', { dest: 'pd' }))[1])
          .split('/')
          .pop()!;
        const start = nowMs();
        const r = await conn.request(`commit_message ${JSON.stringify({ msg_id: id })}`);
        if (!r.startsWith('["ok"')) throw new Error(`commit_message: ${r}`);
        await waitFor(async () => (await q.state(id)) === 'done', 'done', 10_000, 1);
        const st = await q.cmd('get_message_status', { msg_id: id });
        lat.push(Number(String(st[1].status).split(' - ')[1]) * 1000 - start);
      }
      const counts = await q.cmd('num_messages');
      if (counts.que !== pending) throw new Error(`expected ${pending} pending, found ${counts.que}`);
    } finally {
      conn.close();
      await q.stop();
    }
    return { median: round(median(lat)), p99: round(quantile(lat, 0.99)), load_ms: loadMs };
  } finally {
    await t.cleanup();
  }
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
try {
  const script = await writeScript(dir, SCRIPT);
  const floor = await spawnFloor(script, N, dir);
  const empty = await latencies(0, script);
  const pending = await latencies(PENDING, script);
  console.log(
    JSON.stringify({
      bench: 'pending-dispatch',
      samples: N,
      pending: PENDING,
      commit_to_start_ms: { empty: { median: empty.median, p99: empty.p99 }, pending: { median: pending.median, p99: pending.p99 } },
      pending_over_empty: round(pending.median / empty.median),
      load_ms_with_pending: pending.load_ms,
      raw_spawns_per_s: round(floor),
    }),
  );
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}
