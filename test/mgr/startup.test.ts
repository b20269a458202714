// rq-mgr's start as a user sees it: "rq-mgr started" only once each queue and the web answer (a queue that cannot start is named, not waited for), and a terminal's Ctrl-C (SIGINT to the whole foreground group) at any moment stops everything through rq-mgr's own shutdown.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queueCommand } from '../../src/ipc/rq1.js';
import { queuePaths } from '../../src/config/paths.js';
import { BIN } from '../helpers/mgr-proc.js';
import { alive, stopChild } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let child: ChildProcess | undefined;

beforeEach(async () => {
  t = await makeRoot();
  for (const q of ['a', 'b', 'c']) await addQueue(t.root, q);
});
afterEach(async () => {
  await stopChild(child);
  child = undefined;
  await t.cleanup();
});

type Line = { level: number; msg: string; name: string; worker?: string; exit?: string; queues?: string[]; not_serving?: string[] };
const logFile = () => `${t.root}/log/mgr-start.log`;
const lines = (): Line[] =>
  fs
    .readFileSync(logFile(), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** rq-mgr in a process group of its own, as a terminal's foreground job is; its stdin a pipe this test holds. */
function startMgr(): { exited: Promise<number | null>; pgid: number } {
  const log = fs.openSync(logFile(), 'a');
  child = spawn(BIN('rq-mgr'), ['run', '--root', t.root, '--watch-stdin'], { stdio: ['pipe', log, log], detached: true });
  fs.closeSync(log);
  const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
  expect(Number.isInteger(child.pid) && child.pid! > 1).toBe(true);
  return { exited, pgid: child.pid! };
}

describe('rq-mgr start', () => {
  it('says "started" once every queue answers and the web serves; a queue that cannot start is named', async () => {
    await addQueue(t.root, 'broken');
    await fsp.writeFile(queuePaths(t.root, 'broken').configFile, '{ not json');
    startMgr();
    const started = await waitFor(() => lines().find((l) => l.msg === 'rq-mgr started'), 'rq-mgr to say it started', 30_000);
    // At once, as a user's `rq sendmesg` right after the line would: every queue and the web answer.
    const pings = await Promise.all(['a', 'b', 'c'].map((q) => queueCommand(queuePaths(t.root, q).sock, 'ping', {}, { timeoutMs: 5000 })));
    expect(pings.map((p) => (p as unknown[])[0])).toEqual(['pong', 'pong', 'pong']);
    expect((await fetch(`http://127.0.0.1:${t.port}/`)).status).toBe(200);
    expect(started.queues).toEqual(['a', 'b', 'c']);
    expect(started.not_serving).toEqual(['broken (died: exit 1; restarting)']);
    expect(started.level).toBe(40);
  }, 60_000);

  it('a Ctrl-C while it starts reaches rq-mgr alone, which stops every queue and the web itself', async () => {
    const { exited, pgid } = startMgr();
    const pidOf = (q: string) => Number(fs.readFileSync(queuePaths(t.root, q).pidFile, 'utf8'));
    // Mid-start: queue processes are up, "started" has not been said yet.
    const pids = await waitFor(
      () => {
        try {
          const all = ['a', 'b', 'c'].map(pidOf);
          return all.every((p) => Number.isInteger(p) && p > 1) ? all : false;
        } catch {
          return false;
        }
      },
      'the queue processes to start',
      30_000,
    );
    process.kill(-pgid, 'SIGINT');
    expect(await exited).toBe(0);
    const story = lines()
      .map((l) => `${l.name} ${l.worker ?? ''} ${l.msg} ${l.exit ?? ''}`)
      .join('\n');
    expect(
      lines().some((l) => l.msg === 'FINAL SHUTDOWN - EXITING'),
      story,
    ).toBe(true);
    const stopped = lines().filter((l) => l.msg === 'stopped' && l.worker);
    expect(stopped.map((l) => l.worker).sort(), story).toEqual(expect.arrayContaining(['a', 'b', 'c']));
    // Stopped by rq-mgr's TERM in order, not killed by the terminal's SIGINT, and none restarted.
    expect(
      stopped.filter((l) => l.exit === 'signal SIGINT'),
      story,
    ).toEqual([]);
    expect(
      lines().filter((l) => l.msg === 'died; restarting'),
      story,
    ).toEqual([]);
    expect(pids.filter(alive)).toEqual([]);
  }, 60_000);
});
