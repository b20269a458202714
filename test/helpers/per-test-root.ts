// Vitest hooks giving each test a fresh root (kept apart from rq-root.ts, which benches import outside vitest).
import { afterEach, beforeEach } from 'vitest';
import { makeRoot, type QueueProc, type TestRoot } from './rq-root.js';

export interface PerTestRoot {
  t: TestRoot;
  /** The queue process a test started, if any; stopped after the test. */
  q?: QueueProc;
}

/** Registers hooks giving every test of the enclosing suite a fresh root, cleaned up after it. */
export function perTestRoot(): PerTestRoot {
  const ctx = {} as PerTestRoot;
  beforeEach(async () => {
    ctx.t = await makeRoot();
  });
  afterEach(async () => {
    await ctx.q?.stop();
    ctx.q = undefined;
    await ctx.t.cleanup();
  });
  return ctx;
}
