// Bulk enqueue ("100,000 messages enqueued through --from-file in under 15 s, then drained"): the real
// bin/rq sends a JSON-lines file of BENCH_N (100,000) messages to a paused queue (`rq sendmesg --from-file`, timed
// from the command's start to its exit: reading, checking, batches of create_messages, every reply printed), then the
// queue is resumed and drained through a `done ok` script with 4 workers. Baseline in the same run, on the same
// filesystem: this Node process doing mkdir + write of a msg of the same size + rename, without any fsync, for
// BENCH_FLOOR_N (20,000) messages (the no-fsync floor of bench/spool.ts), as a rate.
// Run: npm run build && npm run -s bench bench/bulk-enqueue.ts   (prints one JSON object; BENCH_DRAIN=0 skips the drain)
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT } from '../test/helpers/rq-root.js';
import { DONE_SCRIPT, fsFloor, liveQueue, loadavg, round, runLanes, waitCounts, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const FLOOR_N = Number(process.env.BENCH_FLOOR_N ?? 20_000);
/** BENCH_DRAIN=0: the enqueue and its floor only (A/B runs of the enqueue path); drain_s is then null. */
const DRAIN = process.env.BENCH_DRAIN !== '0';
const Q = 'bulk';
const RQ_BIN = path.join(PROJECT, 'bin', 'rq');

/** bin/rq with its stdout counted, not kept (100,000 lines); resolves with the exit code and the lines. */
function rq(args: string[], cwd: string): Promise<{ code: number | null; lines: number; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(RQ_BIN, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      for (const c of b) if (c === 10) lines++;
    });
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, lines, err }));
  });
}

const load0 = await loadavg();
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
let lq: Awaited<ReturnType<typeof liveQueue>> | undefined;
try {
  const script = await writeScript(dir, DONE_SCRIPT);
  lq = await liveQueue(Q, { script, num_workers: 4 });
  await fs.writeFile(lq.pauseFile, '');
  const file = path.join(dir, 'messages.jsonl');
  const line = (i: number) => JSON.stringify({ src: 'bench', param1: `m${i}`, param2: 'a parameter of modest size' });
  await fs.writeFile(file, `${Array.from({ length: N }, (_, i) => line(i)).join('\n')}\n`);

  const t0 = performance.now();
  const sent = await rq(['sendmesg', '--dest', Q, '--from-file', file, '--root', lq.t.root], dir);
  const enqueueS = (performance.now() - t0) / 1000;
  if (sent.code !== 0 || sent.lines !== N) throw new Error(`rq sendmesg --from-file: exit ${sent.code}, ${sent.lines} lines: ${sent.err}`);
  const counts = await lq.q.cmd('num_messages');
  if (counts.que !== N) throw new Error(`expected ${N} in que, counted ${JSON.stringify(counts)}`);

  const t1 = performance.now();
  let drainS: number | null = null;
  if (DRAIN) {
    await fs.rm(lq.pauseFile);
    await waitCounts(lq.q, (n) => n.done === N, 50);
    drainS = (performance.now() - t1) / 1000;
  }

  const floor = await fsFloor(
    path.join(dir, 'floor'),
    Buffer.from(JSON.stringify({ msg_id: '20261126.1200.00.000.1234567', dest: Q, ...JSON.parse(line(0)) })),
    false,
  );
  const t2 = performance.now();
  await runLanes(FLOOR_N, 16, floor);
  const floorRate = FLOOR_N / ((performance.now() - t2) / 1000);
  const rate = N / enqueueS;
  console.log(
    JSON.stringify({
      bench: 'bulk-enqueue',
      messages: N,
      enqueue_s: round(enqueueS),
      enqueue_per_s: Math.round(rate),
      target_enqueue_s: 15,
      met: enqueueS < 15,
      floor_no_fsync_per_s: Math.round(floorRate),
      ratio_to_floor: round(rate / floorRate),
      drain_s: drainS === null ? null : round(drainS),
      drain_per_s: drainS === null ? null : Math.round(N / drainS),
      load_before: load0,
      load_after: await loadavg(),
    }),
  );
} finally {
  await lq?.close();
  await fs.rm(dir, { recursive: true, force: true });
}
