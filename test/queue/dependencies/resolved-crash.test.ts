// A real SIGKILL of a dependent's queue A as its dependency's end reaches it (rq-beyond §B8.7 row 5): A frozen by test/helpers/hold-point.mjs after dependency_resolved arrived, before it appended `resolved`; B got no answer and tells it again, A re-asks at its restart, and the dependent runs once.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { holdAt } from '../../helpers/crash-point.js';
import { QueueProc, waitFor } from '../../helpers/rq-root.js';
import { later, queuePair } from './queue-pair.js';

const p = queuePair();

it("kill -9 of the dependent's queue after the dependency's end reached it, before its resolved append: the dependency's queue tells it again, the restart re-asks; y runs once, after x is done", async () => {
  const t = await p.roots();
  let a: QueueProc;
  const b = (p.b = await QueueProc.start(t.root, 'db'));
  const point = await holdAt(t.root, { kind: 'write', path: /\/que\/[^/]+\/resolved$/, when: 'before' });
  a = p.a = await QueueProc.start(t.root, 'da', { env: point.env });
  p.held = a;
  const x = await b.send({ param1: 'done', due: later() });
  const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
  expect(await b.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
  const at = await point.reached();
  expect(at).toEqual({ pid: a.pid, path: path.join(a.paths.state.que, y, 'resolved') });
  // x is done for good; db's outbox still owes y its notification (da has not answered); y has no
  // `resolved` and never started.
  expect(await b.state(x)).toBe('done');
  const entry = path.join(b.paths.dir, '.outbox', `${x}.json`);
  expect(JSON.parse(await fs.readFile(entry, 'utf8'))).toMatchObject({ id: x, state: 'done', dependents: [`da/${y}`], done: [] });
  expect(await fs.readdir(path.join(a.paths.state.que, y))).not.toContain('resolved');
  expect(await fs.readdir(a.paths.state.run)).toEqual([]);

  await a.kill9();
  p.held = undefined;
  // db got no answer and keeps the entry to tell da again (§B8.4).
  const dbLog = path.join(t.root, 'log', 'queue-db.log');
  await waitFor(async () => (await fs.readFile(dbLog, 'utf8')).includes('dependents did not answer; telling them again later'), "db's notification to fail");
  // Saying whom, and why: da's socket is gone with its process.
  expect(await fs.readFile(dbLog, 'utf8')).toMatch(new RegExp(`"waiting":\\{"da/${y}":"queue da: [^"]+"\\},"msg":"dependents did not answer`));
  expect(await fs.readdir(path.dirname(entry))).toEqual([`${x}.json`]);

  a = p.a = await QueueProc.start(t.root, 'da');
  const m = await a.waitState(y, ['done'], 20_000);
  const log = await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
  expect(log.match(/ - RQ START - /g)).toHaveLength(1);
  expect(m.depends_done).toEqual({ [`db/${x}`]: 'done' });
  // Whichever told y first (db's retry or the reply to da's re-registration), the other was answered
  // too: the entry goes once da has answered it.
  await waitFor(
    () =>
      fs.access(entry).then(
        () => false,
        () => true,
      ),
    "db's outbox entry to go",
    30_000,
  );
}, 60_000);
