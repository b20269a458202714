// depends_fail "wait" across a crash of the dependent's queue (rq-beyond §B8, docs/coordination.md): a dependent whose dependency failed keeps waiting after a SIGKILL and restart, and runs once the dependency is requeued and succeeds.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';
import { historyOf } from '../../helpers/history.js';

let t: TestRoot;
let a: QueueProc;
let b: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'wa', { num_workers: 2 });
  await addQueue(t.root, 'wb', { num_workers: 2 });
  [a, b] = await Promise.all([QueueProc.start(t.root, 'wa'), QueueProc.start(t.root, 'wb')]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await t?.cleanup();
});

interface Line {
  from?: string;
  to?: string;
  event?: string;
  state?: string;
}
const history = (q: QueueProc, id: string): Promise<Line[]> => historyOf(q, id) as Promise<Line[]>;
const resolvedAsErr = async (q: QueueProc, id: string) => (await history(q, id)).filter((l) => l.event === 'depends_resolved' && l.state === 'err').length;

it('a dependent whose dependency is err keeps waiting after its queue is SIGKILLed and restarted, then runs once the dependency is requeued and done', async () => {
  const gate = path.join(t.root, 'gate-open');
  const x = await b.send({ param1: 'gate', param2: gate });
  await b.waitState(x, ['err']);
  const y = await a.send({ param1: 'done', depends: [`wb/${x}`], depends_fail: 'wait' });
  // The registration's reply (x is err) is recorded in y's resolved file and history; y waits on.
  await waitFor(async () => (await resolvedAsErr(a, y)) === 1, 'the registration reply to be recorded');
  expect((await a.cmd('get_message', { msg_id: y }))[1].waiting).toEqual({ reason: 'dependencies', waiting_on: [`wb/${x}`] });

  await a.kill9();
  a = await QueueProc.start(t.root, 'wa');
  // The restarted queue works out y's wait again from depends and resolved, and registers again:
  // wb answers err once more (a second depends_resolved line). Until then, or if y left its wait, stop.
  await waitFor(async () => (await resolvedAsErr(a, y)) === 2 || (await a.state(y)) !== 'que', "y's registration after the restart to be answered");
  const after = (await a.cmd('get_message', { msg_id: y }))[1];
  expect(after.state).toBe('que');
  expect(after.waiting).toEqual({ reason: 'dependencies', waiting_on: [`wb/${x}`] });
  expect((await a.cmd('waiting', { reason: 'dependencies' }))[1]).toEqual([{ msg_id: y, reason: 'dependencies', waiting_on: [`wb/${x}`] }]);
  expect((await history(a, y)).filter((l) => l.from === 'que' && l.to === 'run')).toEqual([]);

  await fs.writeFile(gate, '');
  expect(await b.cmd('requeue_message', { msg_id: x })).toEqual(['ok', 'msg requeued']);
  await b.waitState(x, ['done']);
  const done = await a.waitState(y, ['done', 'err']);
  expect(done.state).toBe('done');
  expect(done.depends_done).toEqual({ [`wb/${x}`]: 'done' });
  expect((await history(a, y)).filter((l) => l.from === 'que' && l.to === 'run')).toHaveLength(1);
});
