// The status that explains a move out of run/ (a retry's, rq's own failure, a finish to err, a folded message's "duplicate") is fsynced before the rename, so a crash between never leaves a moved message with an older status.
import pino from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { QueueConfig } from '../../../src/config/queue-config.js';
import { Coalescer } from '../../../src/queue/coordination/coalescing.js';
import { MessageIndex } from '../../../src/queue/index/message-index.js';
import { ScriptRun } from '../../../src/queue/launch/script-run.js';
import { RunMoves } from '../../../src/queue/transitions/run-moves.js';
import { QueueSpool } from '../../../src/spool/queue-spool.js';
import { type RecordingFs, recordingFs } from '../../helpers/recording-fs.js';
import { HOST, type TempSpool, tempSpool } from '../../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
let t: TempSpool;
let rec: RecordingFs;
let index: MessageIndex;
let moves: RunMoves;

beforeEach(async () => {
  t = await tempSpool('test', { now: () => T0 });
  rec = recordingFs(t.root);
  // The same queue seen through a recording fs; its creates are made by `t.spool`, so it needs no journal.
  const spool = new QueueSpool(t.root, 'test', { host: HOST, now: () => T0, fs: rec.fs, journal: false });
  index = new MessageIndex(() => T0);
  const config = () => ({ coalesce_params: [1] }) as unknown as QueueConfig;
  moves = new RunMoves({ spool, ends: spool, index, coalescer: new Coalescer({ index, config }), now: () => T0 });
});
afterEach(() => t.cleanup());

async function started(others = 0): Promise<ScriptRun> {
  const m = await t.spool.create({ dest: 'test', param1: 'a' }, { commit: true });
  for (let i = 0; i < others; i++) index.enqueue(await t.spool.create({ dest: 'test', param1: 'a' }, { commit: true }));
  const run = new ScriptRun(m, pino({ level: 'silent' }), T0);
  moves.begin(run);
  moves.start(run);
  rec.clear();
  return run;
}

/** The status of `id` was fsynced (done, not only issued) before `id`'s directory was renamed. */
function syncedBeforeRename(id: string): void {
  const synced = rec.log.findIndex((l) => l.startsWith('fsynced ') && l.endsWith(`/${id}/status`));
  const renamed = rec.log.findIndex((l) => l.startsWith('rename ') && l.includes(`/${id} -> `));
  expect(synced, rec.log.join('\n')).toBeGreaterThanOrEqual(0);
  expect(renamed).toBeGreaterThan(synced);
}

it('a retry', async () => {
  const run = await started();
  await moves.retry(
    run,
    { kind: 'exit', text: 'exit 3', code: 3, signal: null },
    { action: 'retry', attempt: 1, of: 3, delay: 1, status: 'RETRY 1/3 IN 1s - exit 3' },
    {},
  );
  syncedBeforeRename(run.id);
});

it("rq's own failure", async () => {
  const run = await started();
  await moves.fail(run, 'no room');
  syncedBeforeRename(run.id);
});

it('a finish to err', async () => {
  const run = await started();
  await moves.toErr(run, { status: 'FAILED', outcome: 'failed', actor: 'script' });
  syncedBeforeRename(run.id);
});

it('a folded message finished with its parent', async () => {
  const run = await started(1);
  const [dup] = run.dups;
  await moves.finish(run, 'done', 'done', {});
  syncedBeforeRename(dup.msg_id);
});
