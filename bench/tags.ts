// Lookup by tag across 3 queues holding 100,000 tagged messages (rq-beyond §B9.2: target < 100 ms),
// next to the same question answered without an index (read every msg file and filter); and the
// create rate with and without tags over the queue socket, in alternating slices of the same run.
// The messages are written with the spool (the durable create of the socket path), so each queue
// rebuilds its index from them at start (the missing-journal path, timed too).
// Run: npm run build && npm run -s bench bench/tags.ts   (prints one JSON object; BENCH_TAGGED, BENCH_SLICE_S)
import fs from 'node:fs/promises';
import path from 'node:path';
import { mergeTaggedPages } from '../src/ipc/tag-lists.js';
import { QueueSpool } from '../src/spool/queue-spool.js';
import { mapLimit } from '../src/spool/map-limit.js';
import { QueueProc, addQueue, makeRoot } from '../test/helpers/rq-root.js';
import { median, quantile, round, runLanes, slice } from './lib.js';

const TOTAL = Number(process.env.BENCH_TAGGED ?? 100_000);
const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 2);
const QUEUES = ['ta', 'tb', 'tc'];
/** Every message has `common`; one in a thousand also has `rare`. */
const tagsOf = (i: number) => (i % 1000 === 0 ? ['common', `t${i % 50}`, 'rare'] : ['common', `t${i % 50}`]);

const t = await makeRoot();
const host = { host: '127.0.0.1', port: t.port, root: '/' };
for (const q of QUEUES) {
  await addQueue(t.root, q, { num_workers: 1 });
  // Paused: the messages stay in que, where a lookup finds them in memory (done ones cost a stat).
  await fs.writeFile(path.join(t.root, 'config', `${q}.pause`), '');
}
let made = 0;
for (const q of QUEUES) {
  const spool = new QueueSpool(t.root, q, { host });
  const share = Math.ceil(TOTAL / QUEUES.length);
  await runLanes(share, 32, async () => {
    const i = made++;
    await spool.create({ dest: q, tags: tagsOf(i) }, { commit: true });
  });
}
process.stderr.write(`wrote ${made} tagged messages\n`);

const s0 = performance.now();
const procs = await Promise.all(QUEUES.map((q) => QueueProc.start(t.root, q)));
const startMs = performance.now() - s0;

/** What GET /tags/<tag>.json does: every queue asked for its first page, merged newest first. */
async function lookup(tag: string, extra: Record<string, unknown> = {}): Promise<{ ms: number; total: number; n: number }> {
  const t0 = performance.now();
  const pages = await Promise.all(procs.map(async (p) => ({ queue: p.name, page: (await p.cmd('tagged', { tag, limit: 25, ...extra }))[1] })));
  const merged = mergeTaggedPages(pages, 0, 25);
  return { ms: performance.now() - t0, total: merged.total, n: merged.messages.length };
}

const timings = async (tag: string, extra: Record<string, unknown> = {}, rounds = 30) => {
  const ms: number[] = [];
  let last = { total: 0, n: 0 };
  for (let i = 0; i < rounds; i++) {
    const r = await lookup(tag, extra);
    ms.push(r.ms);
    last = r;
  }
  return { p50_ms: round(median(ms)), p95_ms: round(quantile(ms, 0.95)), total: last.total, page: last.n };
};

const common = await timings('common');
const rare = await timings('rare');
const queued = await timings('common', { state: 'que' }, 5);

// Without an index: read every msg of the three queues and keep those with the tag.
const b0 = performance.now();
let found = 0;
for (const q of QUEUES) {
  const dir = path.join(t.root, 'queues', q, 'que');
  const ids = await fs.readdir(dir);
  const hits = await mapLimit(ids, 32, async (id) => (JSON.parse(await fs.readFile(path.join(dir, id, 'msg'), 'utf8')).tags as string[]).includes('rare'));
  found += hits.filter(Boolean).length;
}
const scanMs = performance.now() - b0;

// Create cost: the same create_message with and without tags, 4 clients, alternating slices.
const q0 = procs[0];
const create = (fields: Record<string, unknown>) => async () => {
  const r = await q0.cmd('create_message', { dest: q0.name, ...fields });
  if (r[0] !== 'ok') throw new Error(JSON.stringify(r));
};
const rates = { untagged: [] as number[], tagged: [] as number[] };
for (let i = 0; i < 4; i++) {
  const order = i % 2 ? (['tagged', 'untagged'] as const) : (['untagged', 'tagged'] as const);
  for (const kind of order) {
    const r = await slice(create(kind === 'tagged' ? { tags: ['bench', 'x'] } : {}), 4, SLICE_S);
    rates[kind].push(r.ops / r.s);
  }
}
await Promise.all(procs.map((p) => p.stop()));
await t.cleanup();

console.log(
  JSON.stringify({
    bench: 'tags',
    messages: made,
    queues: QUEUES.length,
    start_with_index_rebuild_ms: round(startMs, 0),
    lookup_common: common,
    lookup_rare: rare,
    lookup_common_state_que: queued,
    baseline_scan_every_msg_for_rare: { ms: round(scanMs, 0), found },
    create_per_s: { untagged: round(median(rates.untagged)), tagged: round(median(rates.tagged)), clients: 4, slice_s: SLICE_S },
    target: { lookup_ms: 100 },
  }),
);
