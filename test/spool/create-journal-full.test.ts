// A journal on a full disk while the que has room: creates are made durable by a syncfs of the spool instead and answered ok, never refused after they ran.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';

let t: TestRoot;
let q: QueueProc | undefined;
let unmount: (() => Promise<void>) | undefined;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'jf');
  const journal = path.join(t.root, 'queues', 'jf', 'journal');
  await fs.mkdir(journal, { recursive: true });
  unmount = await mountTmpfs(journal, '256k', 'rq-journal-full', '0700');
  q = await QueueProc.start(t.root, 'jf');
  fillDisk(path.join(journal, 'filler'));
}, 30_000);
afterAll(async () => {
  await q?.stop();
  await unmount?.();
  await t?.cleanup();
});

describe('a create whose journal record cannot be written', () => {
  it('is answered ok and runs to done: its msg is already on disk, and a syncfs makes it durable', async () => {
    const ids: string[] = [];
    // Sent one by one: each may start before its durability is settled, the case where a refusal would lie.
    for (let i = 0; i < 20; i++) ids.push(await q!.send({ param1: 'done', param2: `j${i}` }));
    const batch = (await q!.cmd('create_messages', { messages: Array.from({ length: 50 }, (_, i) => ({ dest: 'jf', param1: 'done', param2: `b${i}` })) })) as [
      string,
      [string, string][],
    ];
    expect(batch[0]).toBe('ok');
    expect(batch[1].filter(([head]) => head !== 'ok')).toEqual([]);
    await waitFor(async () => (await q!.cmd('num_messages')).done === 70, 'all 70 messages done');
    for (const id of ids) expect(await q!.state(id)).toBe('done');
  });
});
