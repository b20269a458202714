// POST /q/<q>/bulk's checks of the selected ids, over HTTP against a real rq-mgr + web: each refusal a 400 naming `ids`, nothing started.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;
beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {}, other: {} } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const bulk = (body: unknown) =>
  fetch(`${w.base}/q/test/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) });
/** The bulk jobs the queue process remembers (its socket's bulk_status). */
const jobs = async () => (await w.mgr.q('test', 'bulk_status'))[1] as unknown[];

describe('POST /q/<q>/bulk with scope=selected', () => {
  it('refuses no ids, an empty list, more than 10,000 and ids that are not text, naming ids; no job starts', async () => {
    const before = await jobs();
    const cases: [unknown, string][] = [
      [undefined, 'ids: expected at least one selected message (tick its box), received ""'],
      [[], 'ids: expected at least one selected message (tick its box), received []'],
      [Array.from({ length: 10_001 }, (_, i) => `20260101.0000.00.000.${i}`), 'ids: expected at most 10000 message ids, received 10001 values'],
      [['20260101.0000.00.000.1', 7], 'ids: expected at most 10000 message ids, received 2 values'],
    ];
    for (const [ids, text] of cases) {
      const res = await bulk({ op: 'ack', scope: 'selected', ids });
      // The client asked for JSON (Accept): its refusals are JSON too.
      expect([res.status, await res.json()], JSON.stringify(ids)?.slice(0, 40)).toEqual([400, ['fail', expect.stringContaining(text)]]);
    }
    expect(await jobs()).toEqual(before);
  });

  it('takes exactly 10,000', async () => {
    const res = await bulk({ op: 'ack', scope: 'selected', ids: Array.from({ length: 10_000 }, (_, i) => `20260101.0000.00.000.${i}`) });
    expect(res.status).toBeLessThan(400);
  });
});

describe('GET /q/<q>/bulk?job=<job>&x_format=json', () => {
  it('a finished job that skipped messages is never a 200: the first skip reason\'s status, ["fail", text, report] with the job', async () => {
    // Prep messages with a file: a move (which does not carry files) skips them.
    const prepWithFile = async () => {
      const form = new FormData();
      form.append('x_format', 'json');
      form.append('mesg', JSON.stringify({ dest: 'test', _method: 'prep' }));
      form.append('filedata', new Blob([Buffer.from('x')]), 'x.txt');
      const [, full] = (await (await fetch(`${w.base}/q/test/new_message`, { method: 'POST', body: form })).json()) as [string, string];
      return full.split('/').pop()!;
    };
    const ids = [await prepWithFile(), await prepWithFile()];
    const started = await bulk({ op: 'move', dest: 'other', scope: 'selected', ids, x_format: 'json' });
    expect(started.status).toBe(200);
    const job = (await started.json()) as { job: string };
    const read = () => fetch(`${w.base}/q/test/bulk?job=${job.job}&x_format=json`);
    let res = await read();
    for (let i = 0; i < 100 && res.status === 200; i++) res = await read();
    const body = (await res.json()) as [
      string,
      string,
      { total: number; done: number; failed: number; failures: { id: string; reason: string }[]; job: { state: string } },
    ];
    expect(res.status).toBe(409);
    expect(body[0]).toBe('fail');
    expect(body[1]).toMatch(/^2 of 2 messages were not moved \(\d{8}\.[\d.]+: msg has attachments, which a move does not carry; 1 more listed in failures\)$/);
    expect(body[2]).toMatchObject({ total: 2, done: 0, failed: 2, job: { state: 'finished' } });
    expect(body[2].failures.map((f) => f.id).sort()).toEqual([...ids].sort());
  });
});

describe('POST /q/<q>/bulk?x_format=json with dry_run', () => {
  it('counts and changes nothing for every way of saying true, a JSON true among them; no job starts', async () => {
    const before = await jobs();
    for (const dry_run of [true, 'true', '1', 'on', 1]) {
      const res = await bulk({ x_format: 'json', op: 'delete', scope: 'all', dry_run });
      expect([res.status, await res.json()], JSON.stringify(dry_run)).toEqual([200, { op: 'delete', count: expect.any(Number) }]);
    }
    expect(await jobs()).toEqual(before);
  });

  it('refuses a value that is neither true nor false, naming dry_run: never read as "start the job"', async () => {
    const before = await jobs();
    for (const dry_run of ['yes', 'TRUE', 2, 'maybe', [true]]) {
      const res = await bulk({ x_format: 'json', op: 'delete', scope: 'all', dry_run });
      expect([res.status, await res.json()], JSON.stringify(dry_run)).toEqual([400, ['fail', expect.stringMatching(/^dry_run: expected true or false/)]]);
    }
    expect(await jobs()).toEqual(before);
  });
});
