// create_messages: a batch checked whole before anything is made, one reply per message in order, the queue answering throughout; against a real queue process.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueClient } from '../../../src/ipc/queue-client.js';
import { queueCommand } from '../../../src/ipc/rq1.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
let relay: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'batch');
  // Paused: what a batch made stays in que/ to be counted.
  await fs.writeFile(path.join(t.root, 'config', 'batch.pause'), '');
  q = await QueueProc.start(t.root, 'batch');
  await addQueue(t.root, 'relay');
  await fs.writeFile(path.join(t.root, 'config', 'relay.pause'), '');
  relay = await QueueProc.start(t.root, 'relay');
});
afterAll(async () => {
  await relay?.stop();
  await q?.stop();
  await t?.cleanup();
});

const total = async (): Promise<number> => {
  const c = (await q.cmd('num_messages')) as Record<string, number>;
  return Object.values(c).reduce((a, b) => a + b, 0);
};
const big = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ dest: 'batch', param1: `m${from + i}` }));

describe('create_messages', () => {
  it('makes every message of the batch, answers one full id per message in order, each with its own fields', async () => {
    const before = await total();
    const r = await QueueClient.oneShot(q.paths.sock).createMany(big(300));
    if (!r.ok) throw new Error(r.text);
    expect(r.value.every((a) => a.ok)).toBe(true);
    const ids = r.value.map((a) => (a.ok ? a.value.split('/').pop()! : ''));
    expect(new Set(ids).size).toBe(300);
    expect(r.value[0].ok && r.value[0].value).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${t.port}/q/batch/\\d{8}\\.`));
    expect(await total()).toBe(before + 300);
    for (const i of [0, 149, 299]) {
      const m = (await q.cmd('get_message', { msg_id: ids[i] }))[1];
      expect(m).toMatchObject({ msg_id: ids[i], param1: `m${i}`, state: 'que' });
    }
    const files = await fs.readdir(q.paths.state.que);
    expect(ids.every((id) => files.includes(id))).toBe(true);
  });

  it('refuses the whole batch for one bad message, naming its index and field, and makes none', async () => {
    const before = await total();
    const list: unknown[] = big(5);
    list[3] = { dest: 'batch', count: 'many' };
    expect(await q.cmd('create_messages', { messages: list })).toEqual(['fail', 'messages[3]: count: expected a whole number >= 0, received "many"']);
    list[3] = { param1: 'no dest' };
    expect(await q.cmd('create_messages', { messages: list })).toEqual(['fail', 'messages[3]: input missing required "dest" parameter']);
    // A batch makes every message ready to run: another mode is refused, not made as commit.
    list[3] = { dest: 'batch', _method: 'prep' };
    expect(await q.cmd('create_messages', { messages: list })).toEqual([
      'fail',
      'messages[3]: _method: expected commit or nothing: a batch makes every message ready to run (send one for prep or single_que on its own), received "prep"',
    ]);
    list[3] = 'text';
    expect(await q.cmd('create_messages', { messages: list })).toEqual([
      'fail',
      'messages[3]: message: expected a JSON object of message fields, received "text"',
    ]);
    expect(await total()).toBe(before);
    expect((await fs.readdir(q.paths.state.prep)).filter((n) => n.startsWith('_'))).toEqual([]);
    const refused = await QueueClient.oneShot(q.paths.sock).createMany([{ dest: 'batch', priority: 'high' }]);
    expect(refused).toMatchObject({ ok: false, code: 'RQ_ERR_BATCH_MESSAGE' });
  });

  it('refuses a missing, empty, non-array or oversized list', async () => {
    const expected = 'messages: expected an array of 1 to 10000 message objects, received';
    expect(await q.cmd('create_messages', {})).toEqual(['fail', `${expected} nothing`]);
    expect(await q.cmd('create_messages', { messages: [] })).toEqual(['fail', `${expected} 0 messages`]);
    expect(await q.cmd('create_messages', { messages: { dest: 'batch' } })).toEqual(['fail', `${expected} {"dest":"batch"}`]);
    expect(await q.cmd('create_messages', { messages: big(10_001) })).toEqual(['fail', `${expected} 10001 messages`]);
  });

  it('keys inside a batch: a key sent twice answers the first message made with it', async () => {
    const r = await q.cmd('create_messages', {
      messages: [
        { dest: 'batch', idempotency_key: 'k-batch' },
        { dest: 'batch', param1: 'other' },
        { dest: 'batch', idempotency_key: 'k-batch' },
      ],
    });
    expect(r[0]).toBe('ok');
    expect(r[1][2]).toEqual(r[1][0]);
    expect(r[1][1][1]).not.toBe(r[1][0][1]);
  });

  it('answers ping while a batch of 10,000 is being made', async () => {
    const before = await total();
    const batch = queueCommand(q.paths.sock, 'create_messages', { messages: big(10_000) }, { timeoutMs: 120_000 });
    let batchDone = false;
    void batch.then(() => (batchDone = true));
    // Sent once the batch is under way (its first messages are on disk): the pong must not wait for its end.
    const que = q.paths.state.que;
    const start = (await fs.readdir(que)).length;
    while ((await fs.readdir(que)).length === start) await new Promise((r) => setImmediate(r));
    expect(await q.cmd('ping')).toEqual(['pong']);
    expect(batchDone).toBe(false);
    const r = (await batch) as [string, unknown[]];
    expect(r[0]).toBe('ok');
    expect(r[1]).toHaveLength(10_000);
    expect(await total()).toBe(before + 10_000);
  }, 120_000);
});

describe('create_message in the relay queue', () => {
  it('refuses a URL the relay could never deliver, as a batch does, and takes one it can', async () => {
    expect(await relay.cmd('create_message', { dest: 'http://127.0.0.1:9/nothing' })).toEqual([
      'fail',
      'dest: expected an http(s)://host[:port][/root]/q/<queue> URL, received "http://127.0.0.1:9/nothing" (no /q/<queue> in the path)',
    ]);
    expect(await relay.cmd('create_messages', { messages: [{ dest: 'http://127.0.0.1:9/nothing' }] })).toEqual([
      'fail',
      'messages[0]: dest: expected an http(s)://host[:port][/root]/q/<queue> URL, received "http://127.0.0.1:9/nothing" (no /q/<queue> in the path)',
    ]);
    expect((await relay.cmd('create_message', { dest: 'http://127.0.0.1:9/root/q/far' }))[0]).toBe('ok');
  });
});
