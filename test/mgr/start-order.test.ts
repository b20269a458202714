// rq-mgr's start in order: the timers process only once the queues of scandir/ links are made, since a timer fires at start (the cleaner's does).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { MgrProc } from '../helpers/mgr-proc.js';
import { type TestRoot, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let mgr: MgrProc | undefined;
afterEach(async () => {
  await mgr?.stop();
  await t.cleanup();
});

it('starts the timers process after making the queues its scandir links name', async () => {
  t = await makeRoot();
  const dir = path.join(t.root, 'linked');
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, 'run'), '#!/bin/sh\necho done >&3\n', { mode: 0o755 });
  await fs.symlink(dir, path.join(t.root, 'scandir', 'linked'));
  mgr = await MgrProc.start(t.root, { env: { RQ_LOG_LEVEL: 'debug', RQ_LOG_FORMAT: 'json' } });
  const lines = async () =>
    (await fs.readFile(path.join(t.root, 'log', 'mgr-test.log'), 'utf8'))
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; queue?: string; worker?: string; name: string });
  const timersStarted = (l: { msg: string; worker?: string }) => l.msg === 'started' && l.worker === '[timers]';
  const log = await waitFor(async () => ((await lines()).some(timersStarted) ? lines() : null), 'rq-mgr to start the timers process');
  const created = log.findIndex((l) => l.msg === 'queue created' && l.queue === 'linked');
  expect(created).toBeGreaterThanOrEqual(0);
  expect(log.findIndex(timersStarted)).toBeGreaterThan(created);
});
