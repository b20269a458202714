// A real SIGKILL of a dependency's queue at its finish (rq-beyond §B8.7 rows 3 and 4, §B17 "dependency finished"): frozen between its outbox write and its rename run → done, or just after the rename, by test/helpers/hold-point.mjs; after the restart the dependent runs once, and never before its dependency is durably done.
import { execFileSync } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdAtRename } from '../../helpers/crash-point.js';
import { killLeftoverGroups } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

killLeftoverGroups();
let t: TestRoot;
let a: QueueProc | undefined;
let b: QueueProc | undefined;
beforeEach(async () => {
  t = await makeRoot();
});
afterEach(async () => {
  // A script a failed test left reading its FIFO gets its end of file (no reader: ENXIO, nothing to do).
  await fs.open(path.join(t.root, 'x-gate.fifo'), fsConstants.O_WRONLY | fsConstants.O_NONBLOCK).then(
    (fh) => fh.close(),
    () => undefined,
  );
  // The held process answers no stop: a test that failed before its kill leaves it frozen.
  await b?.kill9();
  await a?.stop();
  a = b = undefined;
  await t.cleanup();
});

/**
 * The dependency's script: done at once, except on a run after `$RQ_PARAM2` exists, which first
 * reads the FIFO `$RQ_PARAM1`: that run holds until the test writes to it.
 */
const GATED = `#!/bin/bash
if [ -e "$RQ_PARAM2" ]; then cat "$RQ_PARAM1" > /dev/null; fi
echo "done gated" >&3
`;

async function setup(when: 'before' | 'after'): Promise<{ x: string; y: string; fifo: string; second: string; outbox: string }> {
  const script = path.join(t.root, 'gated.sh');
  await fs.writeFile(script, GATED, { mode: 0o755 });
  await addQueue(t.root, 'da');
  await addQueue(t.root, 'db', { script });
  a = await QueueProc.start(t.root, 'da');
  const point = await holdAtRename(t.root, { from: /\/run\/[^/]+$/, to: /\/done\//, when });
  b = await QueueProc.start(t.root, 'db', { env: point.env });
  const fifo = path.join(t.root, 'x-gate.fifo');
  execFileSync('mkfifo', [fifo]);
  const second = path.join(t.root, 'second-run');
  const x = await b.send({ param1: fifo, param2: second, due: Math.floor(Date.now() / 1000) + 3600 });
  const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
  expect((await a.cmd('get_message', { msg_id: y }))[1].waiting).toMatchObject({ reason: 'dependencies' });
  expect(await b.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
  await point.reached();
  const outbox = path.join(t.root, 'queues', 'db', '.outbox');
  // The entry naming y is durable before the rename, held or not.
  expect(JSON.parse(await fs.readFile(path.join(outbox, `${x}.json`), 'utf8'))).toMatchObject({ id: x, state: 'done', dependents: [`da/${y}`] });
  return { x, y, fifo, second, outbox };
}

/** How many times the dependent ran (RQ START headers in its log). */
async function runsOf(q: QueueProc, id: string): Promise<number> {
  const m = (await q.cmd('get_message', { msg_id: id }))[1];
  return ((await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8')).match(/ - RQ START - /g) ?? []).length;
}

describe('kill -9 of the dependency\'s queue between its outbox write and its rename (§B8.7 "outbox written, crash before x\'s rename")', () => {
  it("the restart drops the stale entry and re-queues x; y waits through x's second run and runs once it is done", async () => {
    const { x, y, fifo, second, outbox } = await setup('before');
    await b!.kill9();
    // x's next run holds on its FIFO: y must still be waiting while it runs.
    await fs.writeFile(second, '');
    b = await QueueProc.start(t.root, 'db');
    await b.waitState(x, ['run']);
    // The load is over once the outbox is empty: a stale entry is removed without being sent, a live one only after its dependents answered.
    await waitFor(async () => (await fs.readdir(outbox)).length === 0, 'the stale outbox entry to go');
    expect((await a!.cmd('get_message', { msg_id: y }))[1]).toMatchObject({ state: 'que', waiting: { reason: 'dependencies' } });
    await fs.writeFile(fifo, 'go');
    await b.waitState(x, ['done']);
    await a!.waitState(y, ['done']);
    expect(await runsOf(a!, y)).toBe(1);
  });
});

describe('kill -9 of the dependency\'s queue right after its rename to done, before it notified (§B8.7 "after the rename, before/while notifying")', () => {
  it('the restart replays the outbox entry: y runs once, and the entry is gone', async () => {
    const { x, y, outbox } = await setup('after');
    expect(await fs.readdir(path.join(t.root, 'queues', 'db', 'run'))).toEqual([]);
    await b!.kill9();
    b = await QueueProc.start(t.root, 'db');
    expect(await b.state(x)).toBe('done');
    await a!.waitState(y, ['done'], 20_000);
    expect(await runsOf(a!, y)).toBe(1);
    await waitFor(async () => (await fs.readdir(outbox)).length === 0, 'the outbox to empty');
  });
});
