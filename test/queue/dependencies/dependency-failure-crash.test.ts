// A real SIGKILL of a dependent's queue as a failed dependency finishes it (rq-beyond §B17 "dependency failure"): frozen by test/helpers/hold-point.mjs between the dependent's msg write (outcome dependency_failed) and its rename que → err; after the restart it is err dependency_failed and never runs.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { holdAtRename } from '../../helpers/crash-point.js';
import { historyFile } from '../../helpers/history.js';
import { QueueProc } from '../../helpers/rq-root.js';
import { later, queuePair } from './queue-pair.js';

const p = queuePair();

it("kill -9 of the dependent's queue between its dependency_failed msg write and its rename que → err: err dependency_failed by recovery at the restart, never run", async () => {
  const t = await p.roots();
  let a: QueueProc;
  const b = (p.b = await QueueProc.start(t.root, 'db'));
  const point = await holdAtRename(t.root, { from: /\/que\/[^/]+$/, to: /\/err\//, when: 'before' });
  a = p.a = await QueueProc.start(t.root, 'da', { env: point.env });
  p.held = a;
  const x = await b.send({ param1: 'err', due: later() });
  const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
  expect((await a.cmd('get_message', { msg_id: y }))[1].waiting).toMatchObject({ reason: 'dependencies' });
  await b.cmd('run_message', { msg_id: x });
  expect(await point.reached()).toEqual({ from: path.join(a.paths.state.que, y), to: path.join(a.paths.state.err, y) });
  expect(JSON.parse(await fs.readFile(path.join(a.paths.state.que, y, 'msg'), 'utf8'))).toMatchObject({ outcome: 'dependency_failed' });

  await a.kill9();
  p.held = undefined;
  a = p.a = await QueueProc.start(t.root, 'da');
  expect(await fs.readdir(a.paths.state.que)).toEqual([]);
  expect(await a.cmd('num_messages')).toMatchObject({ que: 0, run: 0, err: 1, done: 0 });
  const m = (await a.cmd('get_message', { msg_id: y }))[1];
  expect(m).toMatchObject({ state: 'err', outcome: 'dependency_failed', status: `err - DEPENDENCY FAILED - db/${x} is err (failed)` });
  // Finished by recovery from the written outcome, not failed a second time by the dependency's answer to a new registration.
  const moves = (await historyFile(path.join(t.root, m.path))).filter((l) => l.from !== undefined).map((l) => `${l.from}→${l.to}:${l.actor}`);
  expect(moves).toEqual(['que→err:recovery']);
  expect((await a.cmd('run_message', { msg_id: y }))[0]).toBe('fail');
  expect(await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8').catch(() => '')).not.toContain('RQ START');
});
