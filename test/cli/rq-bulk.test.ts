// rq bulk against a real rq-mgr and queue: counted first, refused without --yes when stdin is not a terminal (exit 2), done with it, option errors named (exit 2).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MgrProc } from '../helpers/mgr-proc.js';
import { fillQueue } from '../helpers/fill-queue.js';
import { expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

let t: TestRoot;
let mgr: MgrProc;
let ids: string[];
const rq = (args: string[]) => runRq(args, { root: t.root });

beforeAll(async () => {
  t = await makeRoot();
  ids = await fillQueue(t.root, 'bq', 6, { state: (i) => (i < 5 ? 'err' : 'done') });
  await addQueue(t.root, 'dest', {});
  for (const q of ['bq', 'dest']) await fs.writeFile(path.join(t.root, 'config', `${q}.pause`), '');
  mgr = await MgrProc.start(t.root);
  for (const q of ['bq', 'dest']) await mgr.waitQueueUp(q);
}, 60_000);
afterAll(async () => {
  await mgr?.stop();
  await t?.cleanup();
});

describe('rq bulk', () => {
  it('refuses without --yes when stdin is not a terminal, saying how many messages it would change', async () => {
    expectOneLineError(
      await rq(['bulk', 'bq', '--op', 'retry', '--state', 'err']),
      'rq: bulk: refusing to retry 5 messages of bq without --yes (stdin is not a terminal to ask on)',
      2,
    );
  });

  it('with --yes acknowledges, then retries, printing ok and the count (or the job as JSON); a repeated id counts once', async () => {
    const ack = await rq(['bulk', 'bq', '--op', 'ack', '--ids', `${ids[0]},${ids[1]}`, '--yes']);
    expect([ack.code, ack.out]).toEqual([0, ['ok 2']]);
    const retry = await rq(['bulk', 'bq', '--op', 'retry', '--state', 'acked', '--yes', '--json']);
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.out[0])).toMatchObject({ op: 'retry', total: 2, changed: 2, state: 'finished' });
    // An id the filter did not pick is not counted; one that is gone by the time it is reached is skipped with its reason.
    const del = await rq(['bulk', 'bq', '--op', 'delete', '--ids', `${ids[2]},${ids[2]}`, '--yes']);
    expect([del.code, del.out]).toEqual([0, ['ok 1']]);
    const nothing = await rq(['bulk', 'bq', '--op', 'ack', '--state', 'done', '--yes']);
    expect([nothing.code, nothing.out]).toEqual([0, ['ok 0']]);
  });

  it('moves to another queue', async () => {
    const move = await rq(['bulk', 'bq', '--op', 'move', '--dest', 'dest', '--state', 'done', '--yes']);
    expect([move.code, move.out]).toEqual([0, ['ok 1']]);
    const ls = await rq(['ls', 'dest', '--json']);
    expect(ls.code).toBe(0);
  });

  it('names each bad option (exit 2)', async () => {
    expectOneLineError(await rq(['bulk', 'bq', '--op', 'explode', '--yes']), 'rq: --op: expected one of retry, delete, ack, move, received "explode"', 2);
    expectOneLineError(
      await rq(['bulk', 'bq', '--op', 'retry', '--state', 'gone', '--yes']),
      /^rq: --state: expected one of prep, que, run, done, relayed, err, acked/,
      2,
    );
    expectOneLineError(await rq(['bulk', 'bq', '--op', 'move', '--yes']), 'rq: --dest: a move needs the queue to move to (--dest QUEUE)', 2);
    expectOneLineError(
      await rq(['bulk', 'bq', '--op', 'ack', '--ids', ids[3], '--state', 'err', '--yes']),
      /^rq: --ids: give either --ids or filter options/,
      2,
    );
  });
});
