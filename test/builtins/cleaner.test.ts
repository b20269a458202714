// The cleaner queue end to end (spec §12.1): messages of many ages in a real root, removed through their queues' processes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { hashList } from '../../src/spool/hash-dir.js';
import { waitFor } from '../helpers/rq-root.js';
import { Host, RECORD_SH } from '../relay/hosts.js';
import { DAY, HOUR, drafted, errored, hashed, trashed } from './cleaner-fixtures.js';

let A: Host;
const now = Date.now();
const made: Record<string, string[]> = {};
let timerLink = '';

beforeAll(async () => {
  A = await Host.start({
    queues: { test: { script: RECORD_SH }, other: { script: RECORD_SH }, sleepy: { script: RECORD_SH } },
    setup: async (root) => {
      // Ages straddling the 3-day cutoff, far from it on both sides (the run happens seconds later).
      const ages = [0.5 * HOUR, 20 * HOUR, 2 * DAY, 2.9 * DAY, 3.1 * DAY, 4 * DAY, 10 * DAY, 40 * DAY];
      made.testDone = [];
      made.testRelayed = [];
      for (const age of ages) made.testDone.push(await hashed(root, 'test', 'done', now, age));
      for (const age of ages) made.testRelayed.push(await hashed(root, 'test', 'relayed', now, age));
      made.otherDone = [await hashed(root, 'other', 'done', now, 5 * DAY), await hashed(root, 'other', 'done', now, 9 * DAY)];
      made.sleepyDone = [await hashed(root, 'sleepy', 'done', now, 5 * DAY)];
      made.err = [
        await errored(root, 'test', now, 5 * DAY, true),
        await errored(root, 'test', now, 20 * HOUR, true),
        await errored(root, 'test', now, 5 * DAY, false),
      ];
      made.trash = [await trashed(root, 'gone', now, 10 * DAY), await trashed(root, 'recent', now, DAY)];
      made.prep = [await drafted(root, 'other', now, 5 * DAY), await drafted(root, 'other', now, DAY)];
      await fs.writeFile(path.join(root, 'config', 'sleepy.down'), '');
      // rq-install linked the daily timer, which fires once at start: the test runs the cleaner itself.
      timerLink = await fs.readlink(path.join(root, 'timers', 'cleaner.json'));
      await fs.rm(path.join(root, 'timers', 'cleaner.json'));
    },
  });
}, 60_000);
afterAll(async () => {
  await A?.stop();
});

async function clean(param1: string, param2?: string) {
  const id = await A.send('cleaner', { dest: 'cleaner', param1, ...(param2 === undefined ? {} : { param2 }) });
  return { id, msg: await A.waitState('cleaner', id, ['done', 'err'], 30_000) };
}

describe('cleaner', () => {
  it('ALLQUEUES, 3 days: old done/relayed/acked errors/prep drafts/trash go, through each queue (counts stay right); DOWN queues are skipped', async () => {
    expect((await A.q('test', 'num_messages')).done).toBe(8);
    expect((await A.q('other', 'num_messages')).prep).toBe(2);
    const { id, msg } = await clean('ALLQUEUES', '3');
    expect(msg.status).toBe(
      'done - cleaned 8 queues keeping 3 days: removed 6 done, 4 relayed, 1 acknowledged errors, 1 trash entries, 1 prep drafts; skipped (DOWN): sleepy',
    );
    const q = queuePaths(A.root, 'test').state;
    expect(await hashList(q.done)).toEqual(made.testDone.slice(0, 4));
    expect(await hashList(q.relayed)).toEqual(made.testRelayed.slice(0, 4));
    expect((await fs.readdir(q.err)).sort()).toEqual([made.err[1], made.err[2]].sort());
    expect(await fs.readdir(path.join(A.root, 'queues', '.trash'))).toEqual([made.trash[1]]);
    // The queue process did the deletes: its counts already know.
    expect(await A.q('test', 'num_messages')).toMatchObject({ done: 4, relayed: 4 });
    expect(await A.q('other', 'num_messages')).toMatchObject({ done: 0, prep: 1 });
    expect(await fs.readdir(queuePaths(A.root, 'other').state.prep)).toEqual([made.prep[1]]);
    expect(await hashList(queuePaths(A.root, 'sleepy').state.done)).toEqual(made.sleepyDone);
    const log = await A.stdio('cleaner', id);
    expect(log).toMatch(/test: removed 4 done, 4 relayed, 1 acknowledged errors/);
    expect(log).toMatch(/sleepy: skipped, queue is DOWN/);
    expect(log).toMatch(/other: removed 2 done, 0 relayed, 0 acknowledged errors, 1 prep drafts/);
  });

  it('one queue with another retention; whole-number days only; a missing queue is an error', async () => {
    const r = await clean('test', '1');
    expect(r.msg.status).toBe('done - cleaned 1 queues keeping 1 days: removed 2 done, 2 relayed, 0 acknowledged errors, 0 trash entries');
    expect(await hashList(queuePaths(A.root, 'test').state.done)).toEqual(made.testDone.slice(0, 2));
    expect((await clean('test', '1.5')).msg.status).toBe('err - param2: expected a whole number of days to keep, received "1.5"');
    expect((await clean('nosuch')).msg.status).toBe('err - the specified queue [nosuch] does not exist');
    expect((await clean('')).msg.status).toBe('err - param1: expected a queue name or ALLQUEUES, received ""');
  });

  it('the daily timer is installed and aimed at the cleaner', async () => {
    expect(timerLink).toMatch(/scripts\/cleaner\/timer\.json$/);
    const timer = JSON.parse(await fs.readFile(path.resolve(A.root, 'timers', timerLink), 'utf8'));
    expect(timer).toEqual({ period: 86400, msg: { dest: 'cleaner', src: 'cleaner timer', param1: 'ALLQUEUES', param2: '3' } });
  });
});

describe('debug', () => {
  it('prints the working directory, the RQ_* variables and the environment, then done', async () => {
    const id = await A.send('debug', { dest: 'debug', param1: 'hello' });
    const m = await A.waitState('debug', id, ['done', 'err']);
    expect(m.status).toBe('done - script completed happily');
    const log = await waitFor(() => A.stdio('debug', id), 'stdio.log');
    expect(log).toContain(`cwd: ${path.join(A.root, 'queues', 'debug', 'run', id, 'job')}`);
    expect(log).toMatch(/^RQ_PARAM1=hello$/m);
    expect(log).toMatch(/^RQ_MSG_ID=\d{8}\./m);
    expect(log).toMatch(/^environment:$/m);
  });
});
