// Search of one queue holding 100,000 messages, half in que and half in done (target: < 1 s per search, paged), from the
// queue's index: the first search builds it from the messages (timed), later ones answer from memory. Baseline in the same
// run: the same question answered the way brightroll's /search did, by reading every msg file of every state and filtering.
// Run: npm run build && npm run -s bench bench/search.ts   (prints one JSON object; BENCH_SEARCHED sets the message count)
import fs from 'node:fs/promises';
import path from 'node:path';
import { QueueSpool } from '../src/spool/queue-spool.js';
import { mapLimit } from '../src/spool/map-limit.js';
import { QueueProc, addQueue, makeRoot } from '../test/helpers/rq-root.js';
import { median, quantile, round, runLanes } from './lib.js';

const TOTAL = Number(process.env.BENCH_SEARCHED ?? 100_000);
const Q = 'sq';
const t = await makeRoot();
await addQueue(t.root, Q, { num_workers: 1 });
// Paused: nothing runs, so the counts hold still while the searches are timed.
await fs.writeFile(path.join(t.root, 'config', `${Q}.pause`), '');
const spool = new QueueSpool(t.root, Q, { host: { host: '127.0.0.1', port: t.port, root: '/' } });
let made = 0;
const w0 = performance.now();
await runLanes(TOTAL, 32, async () => {
  const i = made++;
  const m = await spool.create({ dest: Q, param1: `customer-${i % 5000}`, param2: `order ${i}`, src: i % 10 === 0 ? 'cron' : 'web' }, { commit: true });
  if (i % 2 === 1) await spool.move(m.msg_id, 'que', 'done', { actor: 'bench' });
  if ((i + 1) % 20_000 === 0) process.stderr.write(`wrote ${i + 1} messages\n`);
});
const writeS = (performance.now() - w0) / 1000;
const proc = await QueueProc.start(t.root, Q);

async function search(arg: Record<string, unknown>): Promise<{ ms: number; total: number; page: number }> {
  const t0 = performance.now();
  const r = await proc.cmd('search', { limit: 50, ...arg });
  if (r[0] !== 'ok') throw new Error(JSON.stringify(r));
  return { ms: performance.now() - t0, total: r[1].total, page: r[1].messages.length };
}

const first = await search({ query: { param1: 'customer-17' }, exact: true });
const timings = async (arg: Record<string, unknown>, rounds = 20) => {
  const ms: number[] = [];
  let last = { total: 0, page: 0 };
  for (let i = 0; i < rounds; i++) {
    const r = await search(arg);
    ms.push(r.ms);
    last = r;
  }
  return { p50_ms: round(median(ms)), p95_ms: round(quantile(ms, 0.95)), max_ms: round(Math.max(...ms)), total: last.total, page: last.page };
};
const exact = await timings({ query: { param1: 'customer-17' }, exact: true });
const contains = await timings({ query: { param2: 'order 9999' } });
const two = await timings({ query: { src: 'cron', param1: 'customer-1' } });
const everything = await timings({ offset: 50_000 });
const doneOnly = await timings({ query: { param1: 'customer-17' }, state: 'done' });
const rss = Number((await fs.readFile(`/proc/${proc.pid}/status`, 'utf8')).match(/VmRSS:\s+(\d+)/)![1]) / 1024;

// brightroll's way: every msg of every state read and filtered, per search.
const b0 = performance.now();
let found = 0;
for (const state of ['que', 'done']) {
  const ids = state === 'que' ? await spool.listFlat('que') : await spool.listHashed('done', Infinity);
  const hits = await mapLimit(
    ids,
    32,
    async (id) => JSON.parse(await fs.readFile(path.join(spool.msgDir(state as 'que', id), 'msg'), 'utf8')).param1 === 'customer-17',
  );
  found += hits.filter(Boolean).length;
}
const scanMs = performance.now() - b0;
await proc.stop();
await t.cleanup();

console.log(
  JSON.stringify({
    bench: 'search',
    messages: made,
    write_s: round(writeS, 1),
    first_search_builds_index: { ms: round(first.ms, 0), total: first.total },
    exact_param1: exact,
    contains_param2: contains,
    two_fields: two,
    page_at_offset_50000_no_query: everything,
    state_done_exact: doneOnly,
    queue_rss_mib_after: round(rss, 1),
    baseline_read_every_msg: { ms: round(scanMs, 0), found },
    target: { search_ms: 1000 },
  }),
);
