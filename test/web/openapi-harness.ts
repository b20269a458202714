// What the OpenAPI tests share: one web root under a relative_root, with a message run to done on its queue `test`.
import { afterAll, beforeAll } from 'vitest';
import { type WebRoot, send, startWebRoot, waitState } from './web-root.js';

export const PREFIX = '/rq';

export interface PrefixedRoot {
  w: WebRoot;
  /** The id of a message (tags a,b, priority 3) that ran to done. */
  done: string;
}

/** The file's web root under relative_root `PREFIX/`: started in beforeAll, stopped in afterAll. */
export function prefixedRoot(): PrefixedRoot {
  const s = {} as PrefixedRoot;
  beforeAll(async () => {
    // Under a relative_root: the document's paths, the UI's asset links and its redirect must all carry it.
    s.w = await startWebRoot({ config: { relative_root: `${PREFIX}/` } });
    s.done = await send(s.w.base, 'test', { param1: 'done', param2: 'kept', tags: 'a,b', priority: 3 });
    await waitState(s.w.base, 'test', s.done, ['done']);
  }, 60_000);
  afterAll(async () => {
    await s.w?.stop();
  });
  return s;
}
