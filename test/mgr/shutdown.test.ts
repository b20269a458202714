// rq-mgr's stop when TERM reaches its whole process group at once (systemd's default): children that exit on their own are stopped, not deaths to restart.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mgrCommand } from '../../src/ipc/rq1.js';
import { rootPaths } from '../../src/config/paths.js';
import { BIN } from '../helpers/mgr-proc.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;

beforeEach(async () => {
  t = await makeRoot();
  for (const q of ['a', 'b', 'c']) await addQueue(t.root, q);
});
afterEach(async () => {
  await t.cleanup();
});

describe('rq-mgr shutdown', () => {
  it('logs no "died; restarting" when TERM reaches every process of its group', async () => {
    const logFile = `${t.root}/log/mgr-group.log`;
    const log = fs.openSync(logFile, 'a');
    // Its own process group, as a service manager starts it; stdin a pipe only we hold, so it stops if we die.
    const child = spawn(BIN('rq-mgr'), ['run', '--root', t.root, '--watch-stdin'], { stdio: ['pipe', log, log], detached: true });
    fs.closeSync(log);
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const pgid = child.pid!;
    expect(Number.isInteger(pgid) && pgid > 1).toBe(true);
    await waitFor(
      async () => {
        const st: unknown[] | null = await mgrCommand(rootPaths(t.root).mgrSock, 'status', '', { timeoutMs: 2000 })
          .then((r) => r as unknown[])
          .catch(() => null);
        const workers = (st?.[1] ?? {}) as Record<string, { status: string; pid: number | null }>;
        return ['a', 'b', 'c', '[web]', '[timers]'].every((w) => workers[w]?.status === 'RUNNING' && workers[w].pid);
      },
      'every worker to run',
      20_000,
    );

    process.kill(-pgid, 'SIGTERM');
    expect(await exited).toBe(0);
    const lines = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; worker?: string; name?: string });
    const story = lines.map((l) => `${l.name} ${l.worker ?? ''} ${l.msg}`).join('\n');
    expect(
      lines.filter((l) => l.msg === 'died; restarting' || l.msg === 'started').filter((l) => lines.indexOf(l) > lines.findIndex((x) => x.msg === 'stopping')),
      story,
    ).toEqual([]);
    const stopped = lines.filter((l) => l.msg === 'stopped' && l.worker).map((l) => l.worker);
    expect(stopped.sort()).toEqual(['[timers]', '[web]', 'a', 'b', 'c']);
  });
});
