// The dependencies' crash tests' two queues on one root, da (the dependent's) and db (the dependency's): made per test, stopped after it, the one frozen at a hold killed.
import { afterEach } from 'vitest';
import { killLeftoverGroups } from '../../helpers/process-groups.js';
import { type QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

export interface QueuePair {
  t?: TestRoot;
  a?: QueueProc;
  b?: QueueProc;
  /** The process frozen at the point: it answers no stop, so a test that failed before its kill leaves it there. */
  held?: QueueProc;
  /** A fresh root with queues da and db, for this test. */
  roots(): Promise<TestRoot>;
}

/** Registers the cleanup of the test file's pair of queues; call once at the top of the file. */
export function queuePair(): QueuePair {
  killLeftoverGroups();
  const pair: QueuePair = {
    async roots() {
      pair.t = await makeRoot();
      await addQueue(pair.t.root, 'da');
      await addQueue(pair.t.root, 'db');
      return pair.t;
    },
  };
  afterEach(async () => {
    await pair.held?.kill9();
    for (const q of [pair.a, pair.b]) if (q !== pair.held) await q?.stop();
    pair.a = pair.b = pair.held = undefined;
    await pair.t?.cleanup();
    pair.t = undefined;
  });
  return pair;
}

/** A due an hour ahead: the dependency waits until the test runs it. */
export const later = () => Math.floor(Date.now() / 1000) + 3600;
