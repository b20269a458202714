// Harness of the run-limit tests: queues running the limits.py fixture in one root, started before a describe's tests and stopped after, and what a run's history and log say.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { FIXTURES, QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';
import { historyFile } from '../../helpers/history.js';

export const LIMITS_PY = path.join(FIXTURES, 'scripts', 'limits.py');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Line = Record<string, any>;

/** The history line that ended the last run of message `m` (a get_message answer) of the root at `root`. */
export async function runEnd(root: string, m: { path: string }): Promise<Line> {
  return [...(await historyFile(path.join(root, m.path)))].reverse().find((l) => l.from === 'run')!;
}

/**
 * Called inside a describe: a root with one queue per entry of `queues` (the fixture, one worker, no
 * kill grace, and the entry's config), all started before the describe's tests and stopped after.
 */
export function limitQueues(queues: Record<string, Record<string, unknown>>, timeoutMs: number) {
  let t: TestRoot;
  const q: Record<string, QueueProc> = {};
  beforeAll(async () => {
    t = await makeRoot();
    for (const [name, extra] of Object.entries(queues)) await addQueue(t.root, name, { script: LIMITS_PY, num_workers: 1, extra: { kill_grace: 0, ...extra } });
    await Promise.all(Object.keys(queues).map(async (name) => (q[name] = await QueueProc.start(t.root, name))));
  }, timeoutMs);
  afterAll(async () => {
    await Promise.all(Object.values(q).map((p) => p.stop()));
    await t?.cleanup();
  });
  return {
    q,
    runEnd: (m: { path: string }) => runEnd(t.root, m),
    stdio: (m: { path: string }) => fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8'),
  };
}
