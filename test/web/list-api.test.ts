// GET /q/<q>/messages.json in-process (buildApp and inject, a scripted queue client): the page and its X-Total-Count, the first read's 503, a refusal passed on, an unknown queue.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { queueDir } from '../../src/config/paths.js';
import { buildApp } from '../../src/web/app.js';
import type { QueueClients } from '../../src/web/queue-clients.js';
import { inProcessDeps } from './in-process-app.js';

const ID = '20261121.1643.46.613.1';

let root: string;
let app: FastifyInstance;
/** What the queue's search answers next, and what it was asked. */
let next: unknown;
let asked: { queue: string; args: Record<string, unknown> }[];

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-list-api-'));
  for (const d of ['config', 'queues', 'timers']) await fs.mkdir(path.join(root, d));
  await fs.mkdir(queueDir(root, 'lists'), { recursive: true });
  const queues = {
    client: (queue: string) => ({
      search: async (args: Record<string, unknown>) => {
        asked.push({ queue, args });
        return next;
      },
    }),
    close: () => undefined,
  } as unknown as QueueClients;
  app = await buildApp(inProcessDeps(root, { queues }));
});
afterAll(async () => {
  await app?.close();
  await fs.rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  asked = [];
  next = undefined;
});

const get = (query = '') => app.inject({ url: `/q/lists/messages.json${query}` });

describe('GET /q/<q>/messages.json', () => {
  it('answers the page with its total, offset and limit, the total also in X-Total-Count; asks with the first-read wait', async () => {
    next = { ok: true, value: { total: 51, messages: [{ msg_id: ID, state: 'done', fields: { param1: 'p' }, ms: 12 }] }, raw: null };
    const res = await get('?limit=25&offset=25');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-total-count']).toBe('51');
    expect(res.headers['retry-after']).toBeUndefined();
    expect(JSON.parse(res.body)).toEqual({
      total: 51,
      offset: 25,
      limit: 25,
      messages: [
        {
          msg_id: ID,
          state: 'done',
          acked: false,
          created: expect.any(Number),
          due: null,
          count: null,
          param1: 'p',
          status: 'done',
          duration_ms: 12,
          attempts: 1,
          total_ms: 12,
          finished: null,
        },
      ],
    });
    expect(asked).toEqual([{ queue: 'lists', args: expect.objectContaining({ offset: 25, limit: 25, detail: true, wait_ms: 7000 }) }]);
  });

  it('an empty page is still a page: total 0, no messages', async () => {
    next = { ok: true, value: { total: 0, messages: [] }, raw: null };
    const res = await get();
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('0');
    expect(JSON.parse(res.body)).toMatchObject({ total: 0, offset: 0, messages: [] });
  });

  it('while the queue is still in its first read: 503, Retry-After 2, the count read so far (0 too), no X-Total-Count', async () => {
    for (const read of [4000, 0]) {
      next = { ok: true, value: { total: read, messages: [], building: { read } }, raw: null };
      const res = await get();
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.headers['x-total-count']).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.body)).toEqual(['fail', `queue lists is reading its messages for the list (${read} so far); ask again shortly`]);
    }
  });

  it("passes the queue's refusal on, as sent and with its status", async () => {
    next = { ok: false, code: 'RQ_ERR_NO_REPLY', text: 'queue lists did not answer', raw: ['fail', 'queue lists did not answer'] };
    const res = await get();
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body)).toEqual(['fail', 'queue lists did not answer']);
    expect(res.headers['x-total-count']).toBeUndefined();
  });

  it('an unknown queue is a JSON 404, and no queue is asked', async () => {
    const res = await app.inject({ url: '/q/nosuch/messages.json' });
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body)[0]).toBe('fail');
    expect(asked).toEqual([]);
  });
});
