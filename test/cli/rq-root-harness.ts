// What the rq CLI tests share: one temp root with queues test, relay and dead (test and relay running), a work dir in it, and the real bin/rq run against it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type Run, runRq, sendmesg } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

export interface CliRoot {
  t: TestRoot;
  test: QueueProc;
  relay: QueueProc;
  workDir: string;
  /** Runs the real bin/rq against the temp root (`root: false` leaves --root out). */
  rq(args: string[], opts?: { cwd?: string; root?: boolean; env?: NodeJS.ProcessEnv }): Promise<Run>;
  /** `rq sendmesg --dest test <args>`; the full id it printed. */
  send(...args: string[]): Promise<string>;
}

export const shortId = (fullId: string) => fullId.split('/').pop()!;
export const FULLID = (q: string) => new RegExp(`^ok (http://127\\.0\\.0\\.1:\\d+/q/${q}/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+)$`);

/** The file's root: made and started in beforeAll, stopped and removed in afterAll. */
export function cliRoot(): CliRoot {
  const s = {
    rq: (args, opts = {}) => runRq(args, { cwd: opts.cwd, env: opts.env, root: opts.root === false ? undefined : s.t.root }),
    send: (...args) => sendmesg(s.rq, 'test', ...args),
  } as CliRoot;
  beforeAll(async () => {
    s.t = await makeRoot();
    await addQueue(s.t.root, 'test');
    await addQueue(s.t.root, 'relay');
    await addQueue(s.t.root, 'dead');
    [s.test, s.relay] = await Promise.all([QueueProc.start(s.t.root, 'test'), QueueProc.start(s.t.root, 'relay')]);
    s.workDir = path.join(s.t.root, 'work');
    await fs.mkdir(s.workDir);
  });
  afterAll(async () => {
    await Promise.all([s.test?.stop(), s.relay?.stop()]);
    await s.t?.cleanup();
  });
  return s;
}
