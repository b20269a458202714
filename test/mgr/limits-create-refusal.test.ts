// Concurrency limits refused at create: a bad limit or limit_concurrency gets the §B1.12 text and creates nothing (rq-beyond §B12; real rq-mgr and queue).
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot } from '../helpers/rq-root.js';
import { Limits, killGroup, START_SHARED_MS, startShared } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('one rq-mgr, several queues sharing keys', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    ({ t, L } = await startShared(['r1'], groups));
  }, START_SHARED_MS);
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('refuses a bad limit at create with the §B1.12 texts, and creates nothing', async () => {
    const inUse = await L.send('r1', { param1: 'forever', param2: L.pidFile('adhoc'), limit: 'adhoc', limit_concurrency: 2 });
    const inUsePid = await L.scriptPid('adhoc');
    expect(await L.status('adhoc')).toMatchObject({ concurrency: 2, source: 'message', holders: [{ ref: `r1/${inUse}` }] });

    const counts = await L.mgr.q('r1', 'num_messages');
    const dirs = async () =>
      Object.fromEntries(
        await Promise.all((['prep', 'que', 'run'] as const).map(async (s) => [s, (await fs.readdir(queuePaths(t.root, 'r1').state[s])).sort()])),
      );
    const before = await dirs();
    const cases: [Record<string, unknown>, string][] = [
      [{ limit: 'api:{param5}' }, 'limit: the template names an unknown field {param5} (use {param1}..{param4} or {queue})'],
      [{ limit: 'nokey' }, 'limit: key "nokey" has no concurrency: add it to config/limits.json or send limit_concurrency'],
      [{ limit: 'reports', limit_concurrency: 3 }, 'limit_concurrency: key "reports" has concurrency 2 (config/limits.json), received 3'],
      [{ limit: 'api:x', limit_concurrency: 5 }, 'limit_concurrency: key "api:x" has concurrency 1 (config/limits.json), received 5'],
      [{ limit: 'nokey', limit_concurrency: 0 }, 'limit_concurrency: expected a whole number 1-10000, received 0'],
      [{ limit: '' }, 'limit: expected a key of 1-256 characters without control characters, received ""'],
    ];
    for (const [fields, text] of cases) {
      expect(await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', ...fields }), JSON.stringify(fields)).toEqual(['fail', text]);
    }
    // A concurrency a message gave is known while the key is in use: another value is refused.
    const conflict = await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', limit: 'adhoc', limit_concurrency: 3 });
    expect(conflict[0]).toBe('fail');
    expect(conflict[1]).toMatch(/^limit_concurrency: key "adhoc" has concurrency 2 \(.+\), received 3$/);
    // rq's own client gets each refusal typed by the code rq-mgr sent the queue, passed on as it came.
    const typed = QueueClient.oneShot(queuePaths(t.root, 'r1').sock);
    expect(await typed.create({ dest: 'r1', param1: 'done', limit: 'nokey' })).toMatchObject({ ok: false, code: 'RQ_ERR_LIMIT_NO_CONCURRENCY' });
    expect(await typed.create({ dest: 'r1', param1: 'done', limit: 'adhoc', limit_concurrency: 3 })).toMatchObject({
      ok: false,
      code: 'RQ_ERR_LIMIT_CONFLICT',
      text: conflict[1],
    });

    expect(await L.mgr.q('r1', 'num_messages')).toEqual(counts);
    expect(await dirs()).toEqual(before);
    for (const key of ['nokey', 'api:x', 'api:{param5}']) expect(await L.status(key)).toBeUndefined();
    expect(await L.status('adhoc')).toMatchObject({ concurrency: 2, holders: [{ ref: `r1/${inUse}` }], waiting: [] });

    // The same value, or none, is taken while the key is known.
    const same = await L.send('r1', { param1: 'done', limit: 'adhoc', limit_concurrency: 2 });
    const none = await L.send('r1', { param1: 'done', limit: 'adhoc' });
    for (const id of [same, none]) expect(await L.finish('r1', id)).toMatchObject({ state: 'done' });
    killGroup(inUsePid);
    expect(await L.finish('r1', inUse)).toMatchObject({ state: 'err' });
    await L.statusWhen('adhoc', (s) => s === undefined, 'adhoc to be forgotten');
    // Forgotten with its last user: a key nobody uses has no concurrency any more.
    expect(await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', limit: 'adhoc' })).toEqual([
      'fail',
      'limit: key "adhoc" has no concurrency: add it to config/limits.json or send limit_concurrency',
    ]);
  });
});
