// Benchmark: durable message creates (QueueSpool.create, commit) per second next to the raw filesystem floor.
//
// Run: npx vite-node bench/spool.ts [seconds-per-phase] [concurrency]
//   (vite-node comes with vitest; Node 20 has no --experimental-strip-types.)
//
// "durable" is QueueSpool.create({ commit: true }): everything rq does before it may answer `ok`.
// "floor" is the least a create could do on the same disk: mkdir a temp dir, write the same-size
// msg file, fsync it, rename the dir into que/. It fsyncs no directory, so it is not durable; the
// ratio says what the directory fsyncs of the protocol (design.md §4) cost on this machine.
// Both run in the same process on the same filesystem (os.tmpdir()), in alternating short slices
// (so load from other processes hits both alike), at the same concurrency and then sequentially.
// Prints one JSON object.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { QueueSpool } from '../src/spool/queue-spool.js';
import { STATES } from '../src/message/states.js';
import type { CreateFields } from '../src/message/message.js';
import { slice } from './lib.js';

const SECONDS = Number(process.argv[2] ?? 3);
const CONCURRENCY = Number(process.argv[3] ?? 16);

const FIELDS: CreateFields = { dest: 'bench', src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/**
 * Rates of two ops measured in alternating short slices (A B A B …, `seconds` in total each), so
 * that load from other processes on a small shared machine hits both sides alike.
 */
async function paired(a: () => Promise<void>, b: () => Promise<void>, concurrency: number, seconds: number): Promise<[number, number]> {
  const SLICES = 10;
  const tot = [
    { ops: 0, s: 0 },
    { ops: 0, s: 0 },
  ];
  for (let i = 0; i < SLICES; i++) {
    for (const [k, op] of [a, b].entries()) {
      const r = await slice(op, concurrency, seconds / SLICES);
      tot[k].ops += r.ops;
      tot[k].s += r.s;
    }
  }
  return [tot[0].ops / tot[0].s, tot[1].ops / tot[1].s];
}

async function freshSpool(base: string, tag: string): Promise<QueueSpool> {
  const root = path.join(base, tag);
  const spool = new QueueSpool(root, 'bench', { host: { host: '127.0.0.1', port: 3333, root: '/' } });
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
    const durable = async () => {
      const spool = await freshSpool(base, `durable-${run++}`);
      return async () => void (await spool.create(FIELDS, { commit: true }));
    };
    const floor = async () => {
      const dir = path.join(base, `floor-${run++}`);
      const prep = path.join(dir, 'prep');
      const que = path.join(dir, 'que');
      await fs.mkdir(prep, { recursive: true });
      await fs.mkdir(que, { recursive: true });
      let seq = 0;
      return async () => {
        const n = seq++;
        const tmp = path.join(prep, `_${n}`);
        await fs.mkdir(tmp);
        const fh = await fs.open(path.join(tmp, 'msg'), 'wx', 0o644);
        try {
          await fh.writeFile(body);
          await fh.sync();
        } finally {
          await fh.close();
        }
        await fs.rename(tmp, path.join(que, String(n)));
      };
    };

    const conc = { durable: 0, floor: 0 };
    const seq = { durable: 0, floor: 0 };
    [conc.floor, conc.durable] = await paired(await floor(), await durable(), CONCURRENCY, SECONDS);
    [seq.floor, seq.durable] = await paired(await floor(), await durable(), 1, SECONDS);

    const r = (x: number) => Math.round(x);
    const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
    process.stdout.write(
      JSON.stringify({
        bench: 'spool',
        durable_per_s: r(conc.durable),
        floor_per_s: r(conc.floor),
        ratio: ratio(conc.durable, conc.floor),
        sequential: { durable_per_s: r(seq.durable), floor_per_s: r(seq.floor), ratio: ratio(seq.durable, seq.floor) },
        concurrency: CONCURRENCY,
        msg_bytes: msgBytes,
        seconds: SECONDS,
      }) + '\n',
    );
  } finally {
    await fs.rm(base, { recursive: true, force: true });
  }
}

await main();
