// What the HTTP API tests share: one real rq-mgr + web root for the file, with queues test and other.
import { afterAll, beforeAll } from 'vitest';
import { type WebRoot, startWebRoot } from './web-root.js';

export interface ApiRoot {
  w: WebRoot;
  /** The web's base URL. */
  B: string;
}

/** The file's root: started in beforeAll, stopped in afterAll. */
export function apiRoot(): ApiRoot {
  const s = {} as ApiRoot;
  beforeAll(async () => {
    s.w = await startWebRoot({ queues: { test: {}, other: {} } });
    s.B = s.w.base;
  }, 60_000);
  afterAll(async () => {
    await s.w?.stop();
  });
  return s;
}
