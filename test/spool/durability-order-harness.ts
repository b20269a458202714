// What the durability-order tests share: a per-test root whose queue `test` writes through a recording SpoolFs, and the checks of the order of its calls.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { type RecordingFs, recordingFs } from '../helpers/recording-fs.js';
import { HOST } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);

export interface OrderSpool {
  root: string;
  rec: RecordingFs;
  spool: QueueSpool;
  clock: number;
  /** `p` relative to the root, as the recording logs it. */
  rel(p: string): string;
  /** Marks `resolved` in the log when `p` fulfils, so the answer is ordered against the disk calls. */
  resolved<T>(p: Promise<T>, line?: string): Promise<T>;
}

/** A fresh root for each test, its queue `test` on a recording SpoolFs (log cleared) and a clock the test sets. */
export function orderSpool(): OrderSpool {
  const s: OrderSpool = {
    root: '',
    rec: undefined as unknown as RecordingFs,
    spool: undefined as unknown as QueueSpool,
    clock: T0,
    rel: (p) => path.relative(s.root, p),
    resolved: (p, line = 'resolved') =>
      p.then((v) => {
        s.rec.mark(line);
        return v;
      }),
  };
  beforeEach(async () => {
    s.root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-order-'));
    s.rec = recordingFs(s.root);
    s.clock = T0;
    s.spool = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock, fs: s.rec.fs });
    await s.spool.ensureDirs();
    s.rec.clear();
  });
  afterEach(() => fs.rm(s.root, { recursive: true, force: true }));
  return s;
}

/** Every line of `first` and of `then` is logged, and each of `first` before any of `then`. */
export function expectOrder(log: string[], first: string[], then: string[]): void {
  const where = (l: string) => {
    const i = log.indexOf(l);
    expect(i, `"${l}" missing from\n${log.join('\n')}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  const lastFirst = Math.max(...first.map(where));
  const firstThen = Math.min(...then.map(where));
  expect(lastFirst, `[${first.join(', ')}] before [${then.join(', ')}] in\n${log.join('\n')}`).toBeLessThan(firstThen);
}
