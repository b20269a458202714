// What a create with a limit is refused for before anything is written (rq-beyond §B12.1, §B1.12), on a queue without rq-mgr; and what a classic message never touches.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'lc');
  q = await QueueProc.start(t.root, 'lc');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

it.each([
  [{ limit: 'api:{param1' }, 'limit: expected a key, or a template whose every {…} names param1..param4 or queue, received "api:{param1"'],
  [{ limit: 'api:param1}' }, 'limit: expected a key, or a template whose every {…} names param1..param4 or queue, received "api:param1}"'],
  [{ limit: 'api:{param5}' }, 'limit: the template names an unknown field {param5} (use {param1}..{param4} or {queue})'],
  [{ limit: '' }, 'limit: expected a key of 1-256 characters without control characters, received ""'],
  [{ limit_concurrency: 5 }, 'limit_concurrency: expected a limit on the message or its queue to apply to, received 5'],
  [{ limit: 'reports', limit_concurrency: 0 }, 'limit_concurrency: expected a whole number 1-10000, received 0'],
])('refuses %j and creates nothing', async (fields, text) => {
  expect(await q.cmd('create_message', { dest: 'lc', param1: 'done', ...fields })).toEqual(['fail', text]);
  expect((await q.cmd('num_messages')).que + (await q.cmd('num_messages')).done).toBe(0);
});

it('a limited create without rq-mgr to hold the table is refused, saying so', async () => {
  const [ok, text] = await q.cmd('create_message', { dest: 'lc', param1: 'done', limit: 'reports', limit_concurrency: 1 });
  expect(ok).toBe('fail');
  expect(text).toMatch(/^limit: the limits table \(rq-mgr\) did not answer \(/);
  expect((await q.cmd('num_messages')).que).toBe(0);
});

it('an empty limit_concurrency is no value; a classic message’s finish writes nothing of the dependency outbox', async () => {
  const id = String((await q.cmd('create_message', { dest: 'lc', param1: 'done', limit_concurrency: '' }))[1])
    .split('/')
    .pop()!;
  expect((await q.waitState(id, ['done'])).limit_concurrency).toBeUndefined();
  expect(fs.existsSync(path.join(t.root, 'queues', 'lc', '.outbox'))).toBe(false);
});
