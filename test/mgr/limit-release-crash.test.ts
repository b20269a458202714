// A limited run's slot at the points where a queue can lose it (rq-beyond §B12.5): the queue process SIGKILLed between its grant and the script's start, or after the script ended before its limit_release left; and a limit_release lost on the socket. The queue, one rq-mgr starts, is held there by test/helpers/hold-point.mjs (real rq-mgr, queues and scripts; "never more than 1" sampled from /proc).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { type CrashPoint, type Reached, holdAt } from '../helpers/crash-point.js';
import { LimitSampler } from '../helpers/limit-sampler.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { alive, killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { Limits, expectNoOverlap, writeLimits } from './limits-harness.js';

const groups = killLeftoverGroups();
let t: TestRoot | undefined;
let L: Limits | undefined;
let sampler: LimitSampler | undefined;
afterEach(async () => {
  await sampler?.stop();
  // A queue frozen at the point answers no stop: rq-mgr's stop ends it with KILL after its grace.
  await L?.mgr.stop();
  await t?.cleanup();
  L = t = sampler = undefined;
});

/** Key `lk` of concurrency 1; queues qa (held at `point`) and qb under one settled rq-mgr. */
async function setUp(point: (root: string) => Promise<CrashPoint<Reached>>): Promise<{ L: Limits; point: CrashPoint<Reached> }> {
  t = await makeRoot();
  await writeLimits(t.root, { lk: 1 });
  await addQueue(t.root, 'qa');
  await addQueue(t.root, 'qb');
  const p = await point(t.root);
  L = new Limits(t.root, await MgrProc.start(t.root, { env: p.env }), groups);
  await L.mgr.waitQueueUp('qa');
  await L.mgr.waitQueueUp('qb');
  await L.settled();
  sampler = new LimitSampler(t.root, 'lk', 1).start();
  return { L, point: p };
}

/** rq-mgr's log has this line (its queues log through it). */
async function mgrLogged(root: string, text: string): Promise<void> {
  await waitFor(async () => (await fs.readFile(path.join(root, 'log', 'mgr-test.log'), 'utf8')).includes(text), `rq-mgr's log to say "${text}"`, 20_000);
}

/**
 * With qa's x holding lk's one slot: qb's w queued behind it, qa SIGKILLed at its held point; rq-mgr
 * starts qa again (the hold does not hold twice) and its reset frees the dead process's slot. Both
 * finish; returns the start times of x and of w.
 */
async function killWithWaiter(L: Limits, pid: number, x: string): Promise<[number[], number[]]> {
  const w = await L.send('qb', { param1: 'slow', param2: '0.3', limit: 'lk' });
  await L.line('lk', [`qb/${w}`]);
  process.kill(pid, 'SIGKILL');
  await mgrLogged(L.root, 'limit slots of the previous queue process freed');
  expect(await L.finish('qa', x)).toMatchObject({ state: 'done' });
  expect(await L.finish('qb', w)).toMatchObject({ state: 'done' });
  return [await L.starts('qa', x), await L.starts('qb', w)];
}

it("kill -9 of a queue between its grant and the script's start: the message is in que/ on disk; limit_reset frees the slot; it re-acquires, first in line by its since, and runs once", async () => {
  const { L, point } = await setUp((root) =>
    holdAt(root, { kind: 'rename', from: /\/queues\/qa\/que\/[^/]+$/, to: /\/queues\/qa\/run\//, when: 'before' }, 'qa'),
  );
  // The start may come before the create's answer (its fsyncs): the answer is not waited for.
  void L.send('qa', { param1: 'slow', param2: '0.3', limit: 'lk' }).catch(() => undefined);
  const at = await point.reached();
  const x = path.basename(at.from!);
  expect(at.from).toBe(path.join(queuePaths(L.root, 'qa').state.que, x));
  expect(at.to).toBe(path.join(queuePaths(L.root, 'qa').state.run, x));
  // Granted, not started: rq-mgr counts qa/x; on disk it is in que/, and nothing ran.
  expect((await L.status('lk'))?.holders.map((h) => h.ref)).toEqual([`qa/${x}`]);
  expect(await fs.readdir(queuePaths(L.root, 'qa').state.run)).toEqual([]);
  const [sx, sw] = await killWithWaiter(L, at.pid, x);
  expect(sx).toHaveLength(1);
  expect((await L.history('qa', x)).filter((e) => e.from === 'run')).toHaveLength(1);
  // x asked again with its first since, older than w's: it went first (§B12.5 "re-acquired at dispatch").
  expect(sw).toHaveLength(1);
  expect(sw[0]).toBeGreaterThanOrEqual(sx[0]);
  expectNoOverlap(await sampler!.stop(), 1);
  await L.statusWhen('lk', (s) => s === undefined, 'lk to be free');
});

it("kill -9 of a queue after the script ended, before its limit_release left: the slot stays counted until the next process's limit_reset; the message, caught in run/, runs again as interrupted", async () => {
  const { L, point } = await setUp((root) => holdAt(root, { kind: 'send', payload: /limit_release/, when: 'before' }, 'qa'));
  const x = await L.send('qa', { param1: 'slow', param2: '0.3', limit: 'lk' });
  const at = await point.reached();
  expect(at.payload).toContain(`qa/${x}`);
  // The script is over (its process is gone) and the run's end is not on disk yet: x is still in run/.
  const runDir = path.join(queuePaths(L.root, 'qa').state.run, x);
  expect(alive(Number(await fs.readFile(path.join(runDir, 'pid'), 'utf8')))).toBe(false);
  expect((await L.status('lk'))?.holders.map((h) => h.ref)).toEqual([`qa/${x}`]);
  const [sx, sw] = await killWithWaiter(L, at.pid, x);
  // Recovery put x back as interrupted (§B13) and it ran again, before w (older since), under the slot.
  expect(sx).toHaveLength(2);
  expect((await L.history('qa', x)).filter((e) => e.from === 'run' && e.to === 'que').map((e) => e.actor)).toEqual(['recovery']);
  expect(sw).toHaveLength(1);
  expect(sw[0]).toBeGreaterThanOrEqual(sx[1]);
  expectNoOverlap(await sampler!.stop(), 1);
  await L.statusWhen('lk', (s) => s === undefined, 'lk to be free');
});

it("a limit_release lost on the socket: the queue sends it again, and the next waiter gets the slot without waiting for rq-mgr's 60 s sweep", async () => {
  const { L, point } = await setUp((root) => holdAt(root, { kind: 'send', payload: /limit_release/, when: 'drop' }, 'qa'));
  const qaPid = await L.mgr.waitQueueUp('qa');
  const x = await L.send('qa', { param1: 'slow', param2: '1', limit: 'lk' });
  const w = await L.send('qb', { param1: 'slow', param2: '0.3', limit: 'lk' });
  await L.line('lk', [`qb/${w}`]);
  const at = await point.reached();
  expect(at).toMatchObject({ pid: qaPid });
  expect(at.payload).toContain(`qa/${x}`);
  expect(await L.finish('qa', x)).toMatchObject({ state: 'done' });
  expect(await L.finish('qb', w, 15_000)).toMatchObject({ state: 'done' });
  const [sx, sw] = [await L.starts('qa', x), await L.starts('qb', w)];
  expect(sx).toHaveLength(1);
  expect(sw).toHaveLength(1);
  expect(sw[0]).toBeGreaterThanOrEqual(sx[0]);
  // The same qa process did it all: nothing crashed.
  expect(await L.mgr.waitQueueUp('qa')).toBe(qaPid);
  expectNoOverlap(await sampler!.stop(), 1);
  await L.statusWhen('lk', (s) => s === undefined, 'lk to be free');
});
