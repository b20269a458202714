// The queue page and its message list with 100,000 messages in the queue (half que, half done; target: < 200 ms each),
// through the web process: the page and messages.json at the first page, the last page, one state, a text filter and sorted by due.
// Baseline in the same run: GET /q/<q>.json (status and counts: the same HTTP and queue-socket round trip with no list).
// The first listing after the queue starts reads every message into the queue's index (timed apart; docs/observability.md).
// Run: npm run build && npm run -s bench bench/message-list.ts   (prints one JSON object; BENCH_LISTED sets the message count)
import fs from 'node:fs/promises';
import path from 'node:path';
import { fillQueue } from '../test/helpers/fill-queue.js';
import { startWebRoot } from '../test/web/web-root.js';
import { median, quantile, round } from './lib.js';

const TOTAL = Number(process.env.BENCH_LISTED ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const Q = 'big';
let writeS = 0;
const w = await startWebRoot({
  queues: { test: {} },
  setup: async (root) => {
    const t0 = performance.now();
    await fillQueue(root, Q, TOTAL, {
      state: (i) => (i % 2 ? 'done' : 'que'),
      fields: (i) => ({ param1: `customer-${i % 5000}`, param2: `order ${i}`, due: 1_795_000_000 + (i % 7919) }),
    });
    writeS = (performance.now() - t0) / 1000;
    // Paused: nothing runs, so the lists hold still while they are timed.
    await fs.writeFile(path.join(root, 'config', `${Q}.pause`), '');
  },
});

async function get(p: string): Promise<{ ms: number; status: number; bytes: number }> {
  const t0 = performance.now();
  const res = await fetch(`${w.base}${p}`);
  const body = await res.arrayBuffer();
  return { ms: performance.now() - t0, status: res.status, bytes: body.byteLength };
}

async function timings(p: string) {
  // One untimed request first: what is timed is the steady answer (the first listing is timed apart above).
  await get(p);
  const ms: number[] = [];
  let last = { status: 0, bytes: 0 };
  for (let i = 0; i < ROUNDS; i++) {
    const r = await get(p);
    if (r.status !== 200) throw new Error(`${p}: HTTP ${r.status}`);
    ms.push(r.ms);
    last = r;
  }
  return { p50_ms: round(median(ms)), p95_ms: round(quantile(ms, 0.95)), max_ms: round(Math.max(...ms)), bytes: last.bytes };
}

try {
  // The first listings wait (7 s at most each, then 503) while the queue reads its messages into its index.
  const t0 = performance.now();
  while ((await get(`/q/${Q}/messages.json?limit=50`)).status === 503);
  const first = { ms: performance.now() - t0 };
  const lastOffset = Math.floor((TOTAL - 1) / 50) * 50;
  const out = {
    bench: 'message-list',
    messages: TOTAL,
    write_s: round(writeS, 1),
    first_listing_reads_index: { ms: round(first.ms, 0) },
    queue_page: await timings(`/q/${Q}`),
    queue_page_last_page: await timings(`/q/${Q}?offset=${lastOffset}`),
    queue_page_done_500: await timings(`/q/${Q}?state=done&limit=500`),
    messages_json: await timings(`/q/${Q}/messages.json`),
    messages_json_last_page: await timings(`/q/${Q}/messages.json?offset=${lastOffset}`),
    messages_json_text: await timings(`/q/${Q}/messages.json?filter=customer-17`),
    messages_json_sort_due: await timings(`/q/${Q}/messages.json?sort=due&order=asc`),
    baseline_status_json: await timings(`/q/${Q}.json`),
    target: { ms: 200 },
  };
  console.log(JSON.stringify(out));
} finally {
  await w.stop();
}
