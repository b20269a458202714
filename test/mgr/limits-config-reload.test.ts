// Concurrency limits reloaded from config/limits.json while rq-mgr runs: raised, refused when invalid, lowered without pre-emption (rq-beyond §B12).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot, waitFor } from '../helpers/rq-root.js';
import { Limits, SHARED_LIMITS, killGroup, START_SHARED_MS, startShared, writeLimits } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('one rq-mgr, several queues sharing keys', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    ({ t, L } = await startShared(['g1'], groups));
  }, START_SHARED_MS);
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('config/limits.json at runtime: raising promotes waiters at once, an invalid file is logged and the table kept, lowering lets holders finish', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await L.send('g1', { param1: 'forever', param2: L.pidFile(`grow-${i}`), limit: 'grow' }));
    const pid1 = await L.scriptPid('grow-1');
    await L.line('grow', [`g1/${ids[1]}`, `g1/${ids[2]}`]);

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: 3 });
    const [pid2, pid3] = [await L.scriptPid('grow-2'), await L.scriptPid('grow-3')];
    expect(await L.status('grow')).toMatchObject({ concurrency: 3, source: 'config', waiting: [] });
    expect((await L.status('grow'))!.holders).toHaveLength(3);

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: '2x' });
    const log = path.join(t.root, 'log', 'mgr-test.log');
    const refused = await waitFor(async () => {
      const lines = (await fs.readFile(log, 'utf8')).split('\n').filter((l) => l.includes('config/limits.json not loaded'));
      return lines.length ? JSON.parse(lines[lines.length - 1]) : false;
    }, 'the invalid limits.json to be logged');
    expect(refused.err).toBe('config/limits.json: "grow": expected a whole number 1-10000 (a JSON number, not text), received "2x"');
    expect(await L.status('grow')).toMatchObject({ concurrency: 3, source: 'config' });
    // A key the file would name, refused for want of a concurrency, says the file is not loaded and why.
    expect(await L.mgr.q('g1', 'create_message', { dest: 'g1', param1: 'done', limit: 'newkey' })).toEqual([
      'fail',
      'limit: key "newkey" has no concurrency: add it to config/limits.json or send limit_concurrency; config/limits.json is not loaded, so no key it names is known (config/limits.json: "grow": expected a whole number 1-10000 (a JSON number, not text), received "2x")',
    ]);
    const fourth = await L.send('g1', { param1: 'forever', param2: L.pidFile('grow-4'), limit: 'grow' });
    await L.line('grow', [`g1/${fourth}`], 'a 4th waits: the concurrency is still 3');

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: 1 });
    await L.statusWhen('grow', (s) => s?.concurrency === 1, 'grow lowered to 1');
    expect((await L.mgr.q('g1', 'create_message', { dest: 'g1', param1: 'done', limit: 'newkey' }))[1]).toBe(
      'limit: key "newkey" has no concurrency: add it to config/limits.json or send limit_concurrency',
    );
    // No pre-emption: the three holders keep running.
    expect([pid1, pid2, pid3].map(alive)).toEqual([true, true, true]);
    expect((await L.status('grow'))!.holders).toHaveLength(3);
    killGroup(pid1);
    await L.statusWhen('grow', (s) => s?.holders.length === 2, 'a holder gone');
    killGroup(pid2);
    await L.statusWhen('grow', (s) => s?.holders.length === 1, 'a second holder gone');
    expect((await L.status('grow'))!.waiting.map((w) => w.ref)).toEqual([`g1/${fourth}`]);
    killGroup(pid3);
    const pid4 = await L.scriptPid('grow-4');
    killGroup(pid4);
    for (const id of [...ids, fourth]) expect(await L.finish('g1', id)).toMatchObject({ state: 'err' });
    await L.statusWhen('grow', (s) => s === undefined, 'grow to be free');
    await writeLimits(t.root, SHARED_LIMITS);
  });
});
