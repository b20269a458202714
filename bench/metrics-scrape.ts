// GET /metrics with 50 live queues (rq-beyond §B16: "a scrape of 50 queues answers in under 200 ms"), next
// to its floor measured in the same run: the same 50 `metrics` round trips plus rq-mgr's status and
// limit_status, straight from this process over open connections, without building the exposition.
// Samples alternate (scrape, floor, scrape, …) so load from elsewhere hits both alike. Also: what
// writing the text costs alone (prom-client's aggregate over the 50 replies, in this process).
// Run: npm run build-js && npm run bench -- bench/metrics-scrape.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths, rootPaths } from '../src/config/paths.js';
import { MgrClient } from '../src/ipc/mgr-client.js';
import { QueueClient } from '../src/ipc/queue-client.js';
import { SocketConnection } from '../src/ipc/socket-client.js';
import type { QueueMetrics } from '../src/ipc/stats-reply.js';
import { exposition } from '../src/web/metrics/exposition.js';
import { mgrFamilies } from '../src/web/metrics/mgr-families.js';
import { queueFamilies } from '../src/web/metrics/queue-families.js';
import { MgrProc } from '../test/helpers/mgr-proc.js';
import { addQueue, makeRoot, waitFor } from '../test/helpers/rq-root.js';
import { httpClient, loadavg, median, nowMs, quantile, round } from './web-lib.js';

const QUEUES = Number(process.env.BENCH_QUEUES ?? 50);
const N = Number(process.env.BENCH_N ?? 100);
const MESSAGES_PER_QUEUE = 4;

const load0 = await loadavg();
const t = await makeRoot();
const names = Array.from({ length: QUEUES }, (_, i) => `m${String(i).padStart(2, '0')}`);
for (const n of names) await addQueue(t.root, n, { num_workers: 2 });
const mgr = await MgrProc.start(t.root);
const base = `http://127.0.0.1:${t.port}`;
const client = httpClient(base, 1);
const scrapeMs: number[] = [];
const floorMs: number[] = [];
const buildMs: number[] = [];
let bodyBytes = 0;
let series = 0;
try {
  // 50 node processes starting on two cores: give them time.
  await waitFor(async () => (await client.get('/healthz')).status === 200, 'every queue to answer', 180_000, 200);
  // Some traffic, so that histograms and counters are not all zero.
  const conns = await Promise.all(names.map((n) => SocketConnection.open(queuePaths(t.root, n).sock, 'rq1', { timeoutMs: 10_000 })));
  const queues = conns.map((c) => new QueueClient(async (command, arg) => JSON.parse(await c.request(`${command} ${JSON.stringify(arg)}`))));
  const sent = await Promise.all(queues.flatMap((q, i) => Array.from({ length: MESSAGES_PER_QUEUE }, () => q.create({ dest: names[i], param1: 'done' }))));
  await Promise.all(sent.map(async (a, k) => a.ok && queues[Math.floor(k / MESSAGES_PER_QUEUE)].waitFinished(a.value.split('/').pop()!, 30)));
  const mgrClient = new MgrClient(rootPaths(t.root).mgrSock, 1000);
  const floor = async () => {
    await Promise.all([mgrClient.status(1000), mgrClient.limitStatus(undefined, 1000), ...queues.map((q) => q.metrics())]);
  };
  for (let i = 0; i < 10; i++) {
    await client.get('/metrics');
    await floor();
  }
  for (let i = 0; i < N; i++) {
    let t0 = nowMs();
    const r = await client.get('/metrics');
    scrapeMs.push(nowMs() - t0);
    if (r.status !== 200 || !r.body.includes(`rq_queue_up{queue="${names.at(-1)}"} 1`)) throw new Error(`scrape: ${r.status} ${r.body.slice(0, 300)}`);
    bodyBytes = r.body.length;
    series = r.body.split('\n').filter((l) => l && !l.startsWith('#')).length;
    t0 = nowMs();
    await floor();
    floorMs.push(nowMs() - t0);
  }
  // The text alone: the 50 replies as the web has them, written by prom-client.
  const replies = (await Promise.all(queues.map((q) => q.metrics()))).map((a) => (a.ok ? a.value : null)).filter((m): m is QueueMetrics => m !== null);
  const status = await mgrClient.status();
  for (let i = 0; i < N; i++) {
    const t0 = nowMs();
    await exposition([...mgrFamilies(status.ok ? status.value : null, names), ...replies.flatMap(queueFamilies)]);
    buildMs.push(nowMs() - t0);
  }
  for (const c of conns) c.close();
} finally {
  client.close();
  await mgr.stop();
  await fs.rm(path.join(t.root), { recursive: true, force: true });
}
const stats = (xs: number[]) => ({ median: round(median(xs)), p90: round(quantile(xs, 0.9)), p99: round(quantile(xs, 0.99)), max: round(Math.max(...xs)) });
console.log(
  JSON.stringify({
    bench: 'metrics-scrape',
    queues: QUEUES,
    samples: N,
    scrape_ms: stats(scrapeMs),
    floor_socket_round_trips_ms: stats(floorMs),
    exposition_build_ms: stats(buildMs),
    scrape_over_floor_median_ms: round(median(scrapeMs) - median(floorMs)),
    body_bytes: bodyBytes,
    sample_lines: series,
    target: { scrape_ms_under: 200 },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
