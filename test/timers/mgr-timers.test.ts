// rq-mgr starts and supervises the timers process; it answers on timers/sock and delivers to rq-mgr's queues.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { rq2Command } from '../../src/ipc/rq1.js';
import { VERBS_SH, freePort, waitFor } from '../helpers/rq-root.js';
import { MgrProc, install } from '../helpers/mgr-proc.js';
import { linkTimer } from './timers-proc.js';

let root: string;
let mgr: MgrProc | undefined;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-mgr-timers-'));
  await install(root, await freePort());
});
afterEach(async () => {
  await mgr?.stop();
  mgr = undefined;
  await fs.rm(root, { recursive: true, force: true });
});

const timersCmd = (command: string) => rq2Command(rootPaths(root).timersSock, command, null, { timeoutMs: 5000 });

it('is started by rq-mgr, answers on timers/sock, delivers, and is restarted when it dies', async () => {
  mgr = await MgrProc.start(root);
  await waitFor(async () => (await timersCmd('get_status'))[0] === 'ok', 'the timers socket to answer', 15_000);
  const status = (await mgr.cmd('status'))[1];
  expect(status['[timers]']).toMatchObject({ status: 'RUNNING' });
  const pid = status['[timers]'].pid as number;

  const cfg = { name: 'tq', script: VERBS_SH, num_workers: 1, exec_prefix: '', coalesce_params: [], blocking_params: [] };
  expect(await mgr.cmd('create_queue', JSON.stringify(cfg))).toEqual(['success', 'queue created - awesome']);
  await mgr.waitQueueUp('tq');
  // rq-mgr passes config.json's env ("test") as RQ_ENV, so a 1 s period is accepted.
  await linkTimer(root, 'fast.json', { period: 1, msg: { dest: 'tq', param1: 'done' } });
  await waitFor(async () => (await mgr!.q('tq', 'num_messages')).done >= 2, 'two timer messages done in tq', 15_000);
  const st = (await timersCmd('get_status'))[1] as { sent: number; errors: number; invalid: number };
  expect(st.sent).toBeGreaterThanOrEqual(2);
  expect(st.invalid).toBe(0);
  // rq-install also links the built-in cleaner's daily timer.
  const timers = (await timersCmd('get_timers'))[1] as [string, number][];
  expect(timers.filter(([name]) => name !== 'cleaner')).toEqual([['fast', expect.any(Number)]]);
  expect(await timersCmd('no_such_command')).toEqual(['error', 'unknown command: no_such_command']);

  process.kill(pid, 'SIGKILL');
  await waitFor(
    async () => {
      const s = (await mgr!.cmd('status'))[1]['[timers]'];
      return s.status === 'RUNNING' && s.pid !== pid && (await timersCmd('get_status'))[0] === 'ok';
    },
    'rq-mgr to restart the timers process',
    15_000,
  );
});
