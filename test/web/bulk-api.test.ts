// POST /q/<q>/bulk's checks of the selected ids, over HTTP against a real rq-mgr + web: each refusal a 400 naming `ids`, nothing started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;
beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {} } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const bulk = (body: unknown) => fetch(`${w.base}/q/test/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
/** The bulk jobs the queue process remembers (its socket's bulk_status). */
const jobs = async () => (await w.mgr.q('test', 'bulk_status'))[1] as unknown[];

describe('POST /q/<q>/bulk with scope=selected', () => {
  it('refuses no ids, an empty list, more than 10,000 and ids that are not text, naming ids; no job starts', async () => {
    const before = await jobs();
    const cases: [unknown, string][] = [
      [undefined, 'ids: expected at least one selected message (tick its box), received ""'],
      [[], 'ids: expected at least one selected message (tick its box), received []'],
      [Array.from({ length: 10_001 }, (_, i) => `20260101.0000.00.000.${i}`), 'ids: expected at most 10000 message ids, received "10001 values"'],
      [['20260101.0000.00.000.1', 7], 'ids: expected at most 10000 message ids, received "2 values"'],
    ];
    for (const [ids, text] of cases) {
      const res = await bulk({ op: 'ack', scope: 'selected', ids });
      expect([res.status, await res.text()], JSON.stringify(ids)?.slice(0, 40)).toEqual([400, expect.stringContaining(text)]);
    }
    expect(await jobs()).toEqual(before);
  });

  it('takes exactly 10,000', async () => {
    const res = await bulk({ op: 'ack', scope: 'selected', ids: Array.from({ length: 10_000 }, (_, i) => `20260101.0000.00.000.${i}`) });
    expect(res.status).toBeLessThan(400);
  });
});
