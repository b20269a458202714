// Idempotency keys on a real queue process (rq-beyond §B1): once the keyed message is deleted, its key is free, and concurrent creates with it make exactly one new message.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'ik');
  q = await QueueProc.start(t.root, 'ik');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

const later = () => Math.floor(Date.now() / 1000) + 3600;

it('after the keyed message is deleted, 20 concurrent creates with its key (one connection each) make exactly one message, and every create is answered its id', async () => {
  const first = await q.send({ idempotency_key: 'k-del', due: later() });
  expect(await q.send({ idempotency_key: 'k-del', due: later() })).toBe(first);
  expect(await q.cmd('delete_message', { msg_id: first })).toEqual(['ok', 'msg deleted']);

  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) => q.cmd('create_message', { dest: 'ik', idempotency_key: 'k-del', due: later(), param1: `c${i}` })),
  );
  for (const r of replies) expect(r[0]).toBe('ok');
  const ids = new Set(replies.map((r) => String(r[1]).split('/').pop()));
  expect(ids.size).toBe(1);
  const [second] = ids;
  expect(second).not.toBe(first);
  const que: string[] = (await q.cmd('messages', { state: 'que', limit: 1000 })).map((m: string[] | string) => (Array.isArray(m) ? m[0] : m));
  expect(que).toEqual([second]);
  expect(await q.state(first)).toMatch(/^missing:/);
});
