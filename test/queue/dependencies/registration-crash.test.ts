// A real SIGKILL of a dependent's queue A around its registration with the dependency's queue B (rq-beyond §B8.7 rows 1 and 2, §B17 "create with depends"): A frozen before add_dependent leaves it, or B frozen right after appending it, by test/helpers/hold-point.mjs; after A's restart the dependent runs once, after its dependency.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { holdAt } from '../../helpers/crash-point.js';
import { killLeftoverGroups } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

killLeftoverGroups();
let t: TestRoot | undefined;
let a: QueueProc | undefined;
let b: QueueProc | undefined;
/** The process frozen at the point: it answers no stop, so a test that failed before its kill leaves it there. */
let held: QueueProc | undefined;
afterEach(async () => {
  await held?.kill9();
  await a?.stop();
  await b?.stop();
  a = b = held = undefined;
  await t?.cleanup();
});

const later = () => Math.floor(Date.now() / 1000) + 3600;

async function roots(): Promise<TestRoot> {
  t = await makeRoot();
  await addQueue(t.root, 'da');
  await addQueue(t.root, 'db');
  return t;
}

/** The refs the file `dependents` of x lists, one per line as appended ('' when it has none). */
async function dependentsOf(q: QueueProc, x: string): Promise<string[]> {
  const text = await fs.readFile(path.join(q.paths.state.que, x, 'dependents'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { ref: string }).ref);
}

/** How many times the message ran (RQ START headers in its log). */
async function runsOf(q: QueueProc, id: string): Promise<number> {
  const m = (await q.cmd('get_message', { msg_id: id }))[1];
  return ((await fs.readFile(path.join(t!.root, m.path, 'job', 'stdio.log'), 'utf8')).match(/ - RQ START - /g) ?? []).length;
}

it("kill -9 of the dependent's queue after its create is durable, before add_dependent left (§B8.7 A row 1): no ok; re-registered at the restart, it runs once after its dependency", async () => {
  const { root } = await roots();
  b = await QueueProc.start(root, 'db');
  const point = await holdAt(root, { kind: 'send', payload: /add_dependent/, when: 'before' });
  a = held = await QueueProc.start(root, 'da', { env: point.env });
  const x = await b.send({ param1: 'done', due: later() });
  // Its answer (or why none came), taken at once: the kill below ends the request.
  const create = a.cmd('create_message', { dest: 'da', param1: 'done', depends: [`db/${x}`] }).then(JSON.stringify, (err: Error) => err.message);
  const at = await point.reached();
  expect(at.pid).toBe(a.pid);
  // y is committed (in que/ with its depends) and db has heard nothing of it.
  const [y] = await fs.readdir(a.paths.state.que);
  expect(at.payload).toContain(`"dependent":"da/${y}"`);
  expect(JSON.parse(await fs.readFile(path.join(a.paths.state.que, y, 'msg'), 'utf8'))).toMatchObject({ depends: [`db/${x}`] });
  expect(await dependentsOf(b, x)).toEqual([]);

  await a.kill9();
  held = undefined;
  expect(await create).toMatch(/^no reply/);
  a = await QueueProc.start(root, 'da');
  expect((await a.cmd('get_message', { msg_id: y }))[1]).toMatchObject({ state: 'que', waiting: { reason: 'dependencies', waiting_on: [`db/${x}`] } });
  // The restart registered it (§B8.5): db's x lists it, once.
  await waitFor(async () => (await dependentsOf(b!, x)).length > 0, 'the registration of y at db');
  expect(await dependentsOf(b, x)).toEqual([`da/${y}`]);
  expect(await a.state(y)).toBe('que');
  expect(await b.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
  await a.waitState(y, ['done'], 20_000);
  expect(await runsOf(a, y)).toBe(1);
  expect(await fs.readdir(a.paths.state.que)).toEqual([]);
}, 60_000);

/**
 * db frozen right after it appended y's registration to x's `dependents`, da killed before db's ok
 * came, db let go: it answers into the closed connection and must live on. Then da starts again.
 */
async function appendedThenAKilled(xFinishesFirst: boolean): Promise<{ x: string; y: string; entry: string }> {
  const { root } = await roots();
  const point = await holdAt(root, { kind: 'write', path: /\/que\/[^/]+\/dependents$/, when: 'after' });
  b = held = await QueueProc.start(root, 'db', { env: point.env });
  a = await QueueProc.start(root, 'da');
  const x = await b.send({ param1: 'done', due: later() });
  // Its answer (or why none came), taken at once: the kill below ends the request.
  const create = a.cmd('create_message', { dest: 'da', param1: 'done', depends: [`db/${x}`] }).then(JSON.stringify, (err: Error) => err.message);
  const at = await point.reached();
  expect(at).toEqual({ pid: b.pid, path: path.join(b.paths.state.que, x, 'dependents') });
  const [y] = await fs.readdir(a.paths.state.que);
  expect(await dependentsOf(b, x)).toEqual([`da/${y}`]);

  await a.kill9();
  expect(await create).toMatch(/^no reply/);
  await point.release();
  held = undefined;
  expect(await b.cmd('ping')).toEqual(['pong']);
  const entry = path.join(b.paths.dir, '.outbox', `${x}.json`);
  if (xFinishesFirst) {
    // x finishes while da is down: db's outbox names y from the appended registration alone.
    expect(await b.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
    await b.waitState(x, ['done']);
    expect(JSON.parse(await fs.readFile(entry, 'utf8'))).toMatchObject({ id: x, state: 'done', dependents: [`da/${y}`] });
  }
  a = await QueueProc.start(root, 'da');
  return { x, y, entry };
}

const gone = (file: string) => () =>
  fs.access(file).then(
    () => false,
    () => true,
  );

it("kill -9 of the dependent's queue after the dependency's queue appended its registration, before that queue's ok arrived (§B8.7 B row 2): the registration stands; x finishing while A is down tells y at A's restart; y runs once", async () => {
  const { y, entry } = await appendedThenAKilled(true);
  await a!.waitState(y, ['done'], 20_000);
  expect(await runsOf(a!, y)).toBe(1);
  // da answered db's notification (resolved, or ignored once its re-registration had resolved y): the entry is gone.
  await waitFor(gone(entry), "db's outbox entry to go", 30_000);
  expect(b!.child.exitCode).toBeNull();
}, 60_000);

it('the same crash, y deleted after the restart (§B8.7 B row 2 "or not"): x\'s end tells da of a dependent it does not know, da answers ignored, and the entry goes', async () => {
  const { x, y, entry } = await appendedThenAKilled(false);
  expect(await a!.cmd('delete_message', { msg_id: y })).toEqual(['ok', 'msg deleted']);
  expect(await b!.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
  await b!.waitState(x, ['done']);
  // Written before x's rename, removed once da answered: it names y, whatever da answers.
  await waitFor(gone(entry), "db's outbox entry to go", 30_000);
  expect(await a!.state(y)).toMatch(/^missing/);
  expect(await fs.readdir(a!.paths.state.run)).toEqual([]);
  expect(b!.child.exitCode).toBeNull();
}, 60_000);
