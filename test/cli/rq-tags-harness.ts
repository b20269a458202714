// What the rq tag command tests share: one temp root with queues alpha, beta and counts running, bin/rq and bin/rq-mgr run against it, and messages read back from their queue.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type Run, runRq, sendmesg } from '../helpers/rq-cli.js';
import { PROJECT, QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

export const shortId = (fullId: string) => fullId.split('/').pop()!;
export const AS_ALICE = { env: { USER: 'alice', LOGNAME: 'alice' } };
export const TAG_TEXT = 'a tag of 1-64 characters from A-Z a-z 0-9 \\. _ : @ \\+ - \\(starting with a letter or digit\\)';
const later = () => String(Math.floor(Date.now() / 1000) + 3600);

export interface TagRoot {
  t: TestRoot;
  alpha: QueueProc;
  beta: QueueProc;
  counts: QueueProc;
  rq(args: string[], opts?: { env?: NodeJS.ProcessEnv }): Promise<Run>;
  /** The real bin/rq-mgr against the temp root. */
  rqMgr(args: string[]): Promise<Run>;
  send(dest: string, ...args: string[]): Promise<string>;
  /** A message that waits in the que for an hour. */
  waiting(dest: string, ...args: string[]): Promise<string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  message(fullId: string): Promise<any>;
  tagsOf(fullId: string): Promise<string[] | undefined>;
}

/** The file's root: made and its three queues started in beforeAll, stopped and removed in afterAll. */
export function tagRoot(): TagRoot {
  const procOf = (fullId: string) => ({ alpha: s.alpha, beta: s.beta, counts: s.counts })[fullId.split('/').at(-2) as 'alpha' | 'beta' | 'counts'];
  const s = {
    rq: (args, opts = {}) => runRq(args, { env: opts.env, root: s.t.root }),
    rqMgr: (args) =>
      new Promise((resolve) => {
        const env = { ...process.env };
        delete env.RQ_ROOT;
        execFile(path.join(PROJECT, 'bin', 'rq-mgr'), [...args, '--root', s.t.root], { env }, (err, stdout, stderr) => {
          const lines = (text: string) => text.split('\n').filter((l) => l !== '');
          resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: lines(stdout), err: lines(stderr) });
        });
      }),
    send: (dest, ...args) => sendmesg(s.rq, dest, ...args),
    waiting: (dest, ...args) => s.send(dest, '--param1', 'done', '--due', later(), ...args),
    message: async (fullId) => (await procOf(fullId).cmd('get_message', { msg_id: shortId(fullId) }))[1],
    tagsOf: async (fullId) => (await s.message(fullId)).tags,
  } as TagRoot;
  beforeAll(async () => {
    s.t = await makeRoot();
    for (const q of ['alpha', 'beta', 'counts']) await addQueue(s.t.root, q);
    [s.alpha, s.beta, s.counts] = await Promise.all(['alpha', 'beta', 'counts'].map((n) => QueueProc.start(s.t.root, n)));
  });
  afterAll(async () => {
    await Promise.all([s.alpha?.stop(), s.beta?.stop(), s.counts?.stop()]);
    await s.t?.cleanup();
  });
  return s;
}
