// create_messages on a disk that fills mid-batch (a 3 MiB tmpfs under the queue): each message is made or refused on its own, a refused one leaves nothing behind.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountTmpfs } from '../../helpers/disk-fill.js';
import { readQueMarkers } from '../../helpers/que-markers.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc | undefined;
let unmount: (() => Promise<void>) | undefined;

beforeAll(async () => {
  t = await makeRoot();
  const dir = path.join(t.root, 'queues', 'full');
  await fs.mkdir(dir);
  unmount = await mountTmpfs(dir, '3m', 'rq-full-disk');
  await addQueue(t.root, 'full');
  await fs.writeFile(path.join(t.root, 'config', 'full.pause'), '');
  q = await QueueProc.start(t.root, 'full');
}, 30_000);
afterAll(async () => {
  await q?.stop();
  await unmount?.();
  await t?.cleanup();
});

describe('create_messages on a full disk', () => {
  it('answers ok for the messages made and a disk refusal for the rest; only the ok ones exist, no temp dir is left', async () => {
    // 1 KiB each: a page of tmpfs per msg file (4 KiB), so 1,000 need more than 3 MiB even once the journal, full first, is bypassed.
    const messages = Array.from({ length: 1000 }, (_, i) => ({ dest: 'full', param1: `m${i}`, param2: 'x'.repeat(1024) }));
    const r = (await q!.cmd('create_messages', { messages })) as [string, [string, string][]];
    expect(r[0]).toBe('ok');
    const ok = r[1].flatMap(([head], i) => (head === 'ok' ? [`m${i}`] : []));
    const refused = r[1].filter(([head]) => head === 'fail');
    expect(ok.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(ok.length + refused.length).toBe(1000);
    for (const [, text] of refused) expect(text).toMatch(/ENOSPC|no space/i);
    const { byMarker, doubled } = await readQueMarkers(q!.paths.state.que);
    expect(doubled).toEqual([]);
    expect([...byMarker.keys()].sort()).toEqual([...ok].sort());
    for (const [i, [head, id]] of r[1].entries()) if (head === 'ok') expect(byMarker.get(`m${i}`)?.id).toBe(id.split('/').pop());
    expect((await q!.cmd('num_messages')).que).toBe(ok.length);
    expect((await fs.readdir(q!.paths.state.prep)).filter((n) => n.startsWith('_'))).toEqual([]);
    // The queue still answers, and tells of the full disk by refusing, not by dying, and by its status.
    expect(await q!.cmd('ping')).toEqual(['pong']);
    expect(await q!.cmd('status')).toEqual(['DISK FULL']);
    // Room again (messages deleted): the status goes back by itself, and creates are taken.
    for (const [head, id] of r[1].slice(0, 50)) if (head === 'ok') expect((await q!.cmd('delete_message', { msg_id: id.split('/').pop() }))[0]).toBe('ok');
    await waitFor(async () => (await q!.cmd('status'))[0] === 'PAUSE', 'DISK FULL to clear once there is room', 15_000);
    expect((await q!.cmd('create_message', { dest: 'full', param1: 'after' }))[0]).toBe('ok');
  });
});
