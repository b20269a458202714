// Drain rate with 100 and with 100,000 messages already queued: the per-message cost must not grow
// with the depth of the que (O(log n) index). The deep que is written with the spool itself (the
// same durable create as the socket path), then loaded by the queue process's recovery scan.
// Run: npx vite-node bench/deep-queue.ts   (prints one JSON object)
import os from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DONE_SCRIPT, round, runLanes, waitCounts, writeScript } from './lib.js';
import { QueueProc, addQueue, makeRoot } from '../test/helpers/rq-root.js';
import { QueueSpool } from '../src/spool/queue-spool.js';

const DEEP = Number(process.env.BENCH_DEEP ?? 100_000);
const MEASURE = Number(process.env.BENCH_N ?? 1000);

async function run(depth: number, script: string): Promise<{ per_s: number; load_ms: number }> {
  const t = await makeRoot();
  try {
    await addQueue(t.root, 'deep', { script, num_workers: 1 });
    const spool = new QueueSpool(t.root, 'deep', { host: { host: '127.0.0.1', port: t.port, root: '/' } });
    await runLanes(depth, 32, async () => {
      await spool.create({ dest: 'deep' }, { commit: true });
    });
    await fs.writeFile(path.join(t.root, 'config', 'deep.pause'), '');
    const l0 = performance.now();
    const q = await QueueProc.start(t.root, 'deep');
    const load = performance.now() - l0;
    try {
      const t0 = performance.now();
      await fs.rm(path.join(t.root, 'config', 'deep.pause'));
      const t1 = await waitCounts(q, (n) => n.done >= MEASURE, 10);
      return { per_s: MEASURE / ((t1 - t0) / 1000), load_ms: load };
    } finally {
      await q.stop();
    }
  } finally {
    await t.cleanup();
  }
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const script = await writeScript(dir, DONE_SCRIPT);
const shallow = await run(100 + MEASURE, script);
const deep = await run(DEEP, script);
await fs.rm(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    bench: 'deep-queue',
    measured_messages: MEASURE,
    shallow: { queued: 100 + MEASURE, per_s: round(shallow.per_s), start_ms: round(shallow.load_ms, 0) },
    deep: { queued: DEEP, per_s: round(deep.per_s), start_ms: round(deep.load_ms, 0) },
    ratio: round(deep.per_s / shallow.per_s),
    target: { ratio: 0.9 },
  }),
);
