// A fresh rq root for each test of a file, and the queue processes a test starts in it: all stopped, and the root removed, after each test.
import { afterEach, beforeEach } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot } from './rq-root.js';

export interface RootPerTest {
  /** The current test's root. */
  readonly t: TestRoot;
  /** Adds queue `name` to the root and starts its process, stopped after the test. */
  start(name: string, def?: Parameters<typeof addQueue>[2], env?: NodeJS.ProcessEnv): Promise<QueueProc>;
}

export function rootPerTest(opts: Parameters<typeof makeRoot>[0] = {}): RootPerTest {
  let t: TestRoot | undefined;
  let procs: QueueProc[] = [];
  beforeEach(async () => {
    t = await makeRoot(opts);
  });
  afterEach(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    procs = [];
    await t?.cleanup();
  });
  const current = (): TestRoot => {
    if (!t) throw new Error('rootPerTest: the root exists only inside a test');
    return t;
  };
  return {
    get t() {
      return current();
    },
    // Not a method of `this`: a file may take it apart (`const { start } = root`).
    start: async (name, def = {}, env) => {
      await addQueue(current().root, name, def);
      const q = await QueueProc.start(current().root, name, { env });
      procs.push(q);
      return q;
    },
  };
}
