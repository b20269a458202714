// Vitest hooks giving each test a fresh root (kept apart from rq-root.ts, which benches import outside vitest).
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { MgrProc } from './mgr-proc.js';
import { type QueueDef, QueueProc, type TestRoot, addQueue, makeRoot } from './rq-root.js';

export interface PerTestRoot {
  t: TestRoot;
  /** The queue process a test started, if any; stopped after the test. */
  q?: QueueProc;
  /** Adds queue `name` to the test's root and starts its process, stopped after the test. Not a method of `this`: a file may take it apart. */
  start(name: string, def?: QueueDef, env?: NodeJS.ProcessEnv): Promise<QueueProc>;
}

/** Registers hooks giving every test of the enclosing suite a fresh root (made with `opts`), cleaned up after it. */
export function perTestRoot(opts: Parameters<typeof makeRoot>[0] = {}): PerTestRoot {
  const ctx = {} as PerTestRoot;
  const started: QueueProc[] = [];
  beforeEach(async () => {
    ctx.t = await makeRoot(opts);
  });
  afterEach(async () => {
    await Promise.all([ctx.q, ...started.splice(0)].map((p) => p?.stop()));
    ctx.q = undefined;
    await ctx.t.cleanup();
  });
  ctx.start = async (name, def = {}, env) => {
    await addQueue(ctx.t.root, name, def);
    const q = await QueueProc.start(ctx.t.root, name, { env });
    started.push(q);
    return q;
  };
  return ctx;
}

export interface FileMgrRoot {
  t: TestRoot;
  mgr: MgrProc;
}

/**
 * Registers hooks giving the enclosing file one root with `queues` (name → definition, or a function
 * of the root that makes what the queue needs first) and a
 * running rq-mgr, every queue up before the first test; stopped and removed after the last.
 */
export function mgrRootForFile(queues: Record<string, QueueDef | ((root: string) => Promise<QueueDef>)>): FileMgrRoot {
  const ctx = {} as FileMgrRoot;
  beforeAll(async () => {
    ctx.t = await makeRoot();
    for (const [name, def] of Object.entries(queues)) await addQueue(ctx.t.root, name, typeof def === 'function' ? await def(ctx.t.root) : def);
    ctx.mgr = await MgrProc.start(ctx.t.root);
    await Promise.all(Object.keys(queues).map((q) => ctx.mgr.waitQueueUp(q)));
  });
  afterAll(async () => {
    await ctx.mgr?.stop();
    await ctx.t?.cleanup();
  });
  return ctx;
}
