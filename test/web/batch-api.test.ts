// POST /q/<q>/new_messages: JSON array or JSON lines, one reply per message, the whole batch refused for one bad message; against real rq-mgr, web and queue processes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;

beforeAll(async () => {
  // Paused: what a batch made stays in que to be counted.
  w = await startWebRoot({ queues: { bulk: {} }, setup: async (root) => void (await fs.writeFile(path.join(root, 'config', 'bulk.pause'), '')) });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const post = (body: string, type: string, q = 'bulk') => fetch(`${w.base}/q/${q}/new_messages`, { method: 'POST', headers: { 'content-type': type }, body });
const queued = async (): Promise<number> => ((await (await fetch(`${w.base}/q/bulk.json`)).json()) as { que_size: number }).que_size;
const FULL_ID = /^http:\/\/127\.0\.0\.1:\d+\/q\/bulk\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/;

describe('POST /q/<q>/new_messages', () => {
  it('a JSON array: one ["ok", full id] per message, in order, each with its own fields', async () => {
    const before = await queued();
    const res = await post(
      JSON.stringify(Array.from({ length: 1500 }, (_, i) => ({ param1: `a${i}`, ...(i === 7 ? { dest: 'bulk' } : {}) }))),
      'application/json',
    );
    expect(res.status).toBe(200);
    const [head, replies] = (await res.json()) as [string, [string, string][]];
    expect(head).toBe('ok');
    expect(replies).toHaveLength(1500);
    expect(replies.every(([ok, id]) => ok === 'ok' && FULL_ID.test(id))).toBe(true);
    const m = await (await fetch(`${replies[1499][1]}.json`)).json();
    expect(m).toMatchObject({ param1: 'a1499', dest: 'bulk', state: 'que' });
    expect(await queued()).toBe(before + 1500);
  });

  it('JSON lines (application/x-ndjson), blank lines skipped', async () => {
    const res = await post('{"param1":"l0"}\n\n{"param1":"l1"}\n', 'application/x-ndjson');
    expect(res.status).toBe(200);
    const [, replies] = (await res.json()) as [string, [string, string][]];
    expect(replies.map(([ok]) => ok)).toEqual(['ok', 'ok']);
    expect(await (await fetch(`${replies[1][1]}.json`)).json()).toMatchObject({ param1: 'l1' });
  });

  it('refuses the whole batch with a 400 naming the bad message or line, and makes none', async () => {
    const before = await queued();
    const refused = async (res: Response, text: string | RegExp) => {
      const body = await res.text();
      expect({ status: res.status, type: res.headers.get('content-type'), body }).toMatchObject({
        status: 400,
        type: expect.stringMatching(/^application\/json/),
      });
      const [head, t] = JSON.parse(body) as [string, string];
      expect(head).toBe('fail');
      expect(t).toMatch(text);
    };
    await refused(
      await post(JSON.stringify([{ param1: 'x' }, { count: 'many' }]), 'application/json'),
      /^messages\[1\]: count: expected a whole number >= 0, received "many"$/,
    );
    await refused(
      await post(JSON.stringify([{ param1: 'x' }, { dest: 'other' }]), 'application/json'),
      /^messages\[1\]: dest: expected "bulk" \(the queue of the URL\) or none, received "other"$/,
    );
    await refused(await post(JSON.stringify([{}, 5]), 'application/json'), /^messages\[1\]: message: expected a JSON object of message fields, received 5$/);
    await refused(
      await post('{"param1":"x"}\n{"param1":\n', 'application/x-ndjson'),
      /^request body: expected one JSON object per line, received a syntax error at line 2 column 11 \(byte 25\): Unexpected end of JSON input$/,
    );
    await refused(await post(JSON.stringify({ param1: 'x' }), 'application/json'), /^request body: expected a JSON array of message objects/);
    await refused(await post('param1=x', 'application/x-www-form-urlencoded'), /^request body: expected a JSON array of message objects/);
    await refused(await post('[]', 'application/json'), /^messages: expected an array of 1 to 10000 message objects, received 0 messages$/);
    // Counted before anything is sent on: a body of a million tiny lines is refused at line 10,001.
    await refused(
      await post('{}\n'.repeat(1_000_000), 'application/x-ndjson'),
      /^request body: expected at most 10000 message lines, received line 10001, message 10001$/,
    );
    await refused(
      await post(JSON.stringify(Array.from({ length: 10_001 }, () => ({}))), 'application/json'),
      /^messages: expected an array of 1 to 10000 message objects, received 10001 messages$/,
    );
    expect(await queued()).toBe(before);
  });

  it('an unknown queue is a 404; nothing is made', async () => {
    const res = await post('[{"param1":"x"}]', 'application/json', 'nosuch');
    expect(res.status).toBe(404);
  });
});
