// Benchmark: durable message creates (QueueSpool.create, commit) per second next to the raw filesystem floor.
//
// Run: npx vite-node bench/spool.ts [seconds-per-phase] [concurrency]
//   (vite-node comes with vitest; Node 20 has no --experimental-strip-types.)
//
// "durable" is QueueSpool.create({ commit: true }): everything rq does before it may answer `ok`
// (its journal record written and fdatasynced, shared by every create in flight).
// "per_message_fsync" is the same without the journal (`journal: false`): msg, message dir and que/
// fsynced per create (group-committed que/ only), as rq did before the journal and still does for prep.
// "floor_nosync" is the least a create could do on the same disk: mkdir a temp dir, write the
// same-size msg file, rename the dir into que/, no fsync at all (what the classic daemon does).
// "floor" is that plus an fsync of the msg file: one fsync per message, still not durable.
// Both run in the same process on the same filesystem (os.tmpdir()), in alternating short slices
// (so load from other processes hits both alike), at the same concurrency and then sequentially.
// Prints one JSON object.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { QueueSpool } from '../src/spool/queue-spool.js';
import { STATES } from '../src/message/states.js';
import type { CreateFields } from '../src/message/message.js';
import { fsFloor, slice } from './lib.js';

const SECONDS = Number(process.argv[2] ?? 3);
const CONCURRENCY = Number(process.argv[3] ?? 16);

const FIELDS: CreateFields = { dest: 'bench', src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/**
 * Rates of several ops measured in alternating short slices (A B C A B C …, `seconds` in total each),
 * so that load from other processes on a small shared machine hits every side alike.
 */
async function interleaved(ops: (() => Promise<void>)[], concurrency: number, seconds: number): Promise<number[]> {
  const SLICES = 10;
  const tot = ops.map(() => ({ ops: 0, s: 0 }));
  for (let i = 0; i < SLICES; i++) {
    for (const [k, op] of ops.entries()) {
      const r = await slice(op, concurrency, seconds / SLICES);
      tot[k].ops += r.ops;
      tot[k].s += r.s;
    }
  }
  return tot.map((t) => t.ops / t.s);
}

async function freshSpool(base: string, tag: string, journal = true): Promise<QueueSpool> {
  const root = path.join(base, tag);
  const spool = new QueueSpool(root, 'bench', { host: { host: '127.0.0.1', port: 3333, root: '/' }, ...(journal ? {} : { journal: false as const }) });
  for (const s of STATES) await fs.mkdir(spool.paths.state[s], { recursive: true });
  return spool;
}

async function main(): Promise<void> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-spool-'));
  try {
    // The size of a real msg file, so the floor writes the same bytes.
    const probe = await freshSpool(base, 'probe');
    const sample = await probe.create(FIELDS, { commit: true });
    const msgBytes = (await fs.stat(path.join(probe.msgDir('que', sample.msg_id), 'msg'))).size;
    const body = Buffer.alloc(msgBytes, 'x');

    let run = 0;
    const durable = async (journal = true) => {
      const spool = await freshSpool(base, `durable-${run++}`, journal);
      return async () => void (await spool.create(FIELDS, { commit: true }));
    };
    const floor = (sync: boolean) => fsFloor(path.join(base, `floor-${run++}`), body, sync);

    const phase = async (concurrency: number) => {
      const [nosync, synced, journal, perMessage] = await interleaved(
        [await floor(false), await floor(true), await durable(true), await durable(false)],
        concurrency,
        SECONDS,
      );
      const r = (x: number) => Math.round(x);
      const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
      return {
        durable_per_s: r(journal),
        per_message_fsync_per_s: r(perMessage),
        floor_nosync_per_s: r(nosync),
        floor_per_s: r(synced),
        ratio_to_floor_nosync: ratio(journal, nosync),
        ratio_to_floor: ratio(journal, synced),
        per_message_fsync_ratio_to_floor: ratio(perMessage, synced),
      };
    };
    const concurrent = await phase(CONCURRENCY);
    const sequential = await phase(1);
    process.stdout.write(JSON.stringify({ bench: 'spool', ...concurrent, sequential, concurrency: CONCURRENCY, msg_bytes: msgBytes, seconds: SECONDS }) + '\n');
  } finally {
    await fs.rm(base, { recursive: true, force: true });
  }
}

await main();
