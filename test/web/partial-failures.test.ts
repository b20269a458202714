// Routes over many messages on a disk that really fills (a tmpfs under queues/): a batch create, requeue_errs and cancel_tagged that did some and failed others answer the first failure's status (507), never 2xx, with counts and ids that match the disk.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartialReport } from '../../src/ipc/partial-reply.js';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';
import { waitFor } from '../helpers/rq-root.js';
import { messageIds } from '../security/fuzz-helpers.js';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot | undefined;
let unmount: (() => Promise<void>) | undefined;
let mountError = '';
let filler = '';

beforeAll(async () => {
  w = await startWebRoot({
    queues: { full: {}, errs: {} },
    setup: async (root) => {
      try {
        unmount = await mountTmpfs(path.join(root, 'queues'), '8m', 'rq-partial-disk');
      } catch (err) {
        mountError = (err as Error).message.trim();
      }
      // Paused: what a batch made stays in que/ to be counted.
      await fsp.writeFile(path.join(root, 'config', 'full.pause'), '');
    },
  });
  filler = path.join(w.root, 'queues', 'filler');
}, 60_000);
afterAll(async () => {
  // The queues hold files on the tmpfs: they stop before it goes, and it goes before the root is removed.
  await w?.mgr.stop();
  await unmount?.();
  await w?.stop();
});

const post = (q: string, route: string, body: string, type = 'application/x-www-form-urlencoded') =>
  fetch(`${w!.base}/q/${q}/${route}`, { method: 'POST', headers: { 'content-type': type }, body });
/** Makes room again: the filler shrunk by `bytes`. */
const free = async (bytes: number) => fsp.truncate(filler, Math.max(0, (await fsp.stat(filler)).size - bytes));

/** A partial reply read whole: its status, `["fail", text, report]`, and the report checked for sense. */
async function partial(res: Response, verb: string): Promise<PartialReport> {
  const body = (await res.json()) as [string, string, PartialReport];
  expect(res.status, JSON.stringify(body).slice(0, 400)).toBe(507);
  expect(body[0]).toBe('fail');
  const r = body[2];
  expect(body[1]).toMatch(new RegExp(`^${r.failed} of ${r.total} messages were not ${verb} \\(`));
  expect(r.done + r.failed).toBe(r.total);
  expect(r.failures[0].reason).toMatch(/ENOSPC|no space/i);
  return r;
}

describe('a full disk under the queues (tmpfs)', () => {
  it('a batch create made in part: 507 with how many were made and which, exactly what is on disk', async (ctx) => {
    if (mountError) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
    const before = await messageIds(w!.root, 'full');
    fillDisk(filler);
    // Room for a few messages of 10 KB, not for 300.
    await free(96 * 1024);
    const messages = Array.from({ length: 300 }, (_, i) => JSON.stringify({ param1: `m${i}`, param2: 'x'.repeat(10_000) }));
    const res = await post('full', 'new_messages', messages.join('\n'), 'application/x-ndjson');
    const r = await partial(res, 'created');
    expect(r.total).toBe(300);
    expect(r.done).toBeGreaterThan(0);
    expect(r.failed).toBeGreaterThan(0);
    // Every index is either made (with its id) or failed (with its reason), once.
    const made = r.ids!.map((x) => x.index);
    const lost = r.failures.map((f) => f.index!);
    expect([...made, ...lost].sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    // On disk: exactly the messages the report says were made, each with its own fields; nothing of the failed ones.
    const created = (await messageIds(w!.root, 'full')).filter((id) => !before.includes(id));
    expect(created.sort()).toEqual(r.ids!.map((x) => x.id.split('/').pop()!).sort());
    for (const { index, id } of r.ids!.slice(0, 5)) {
      expect(await (await fetch(`${id}.json`)).json()).toMatchObject({ param1: `m${index}`, state: 'que' });
    }
    await fsp.rm(filler);
  });

  it('all failed: 507 too, none made', async (ctx) => {
    if (mountError) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
    const before = await messageIds(w!.root, 'full');
    fillDisk(filler);
    const res = await post('full', 'new_messages', JSON.stringify(Array.from({ length: 50 }, () => ({ param2: 'x'.repeat(20_000) }))), 'application/json');
    const r = await partial(res, 'created');
    expect(r.done + r.failed).toBe(50);
    expect((await messageIds(w!.root, 'full')).filter((id) => !before.includes(id))).toHaveLength(r.done);
    await fsp.rm(filler);
  });

  it('requeue_errs and cancel_tagged on a full disk: 507 naming each message that failed, and those stay where they were', async (ctx) => {
    if (mountError) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
    const errs = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ param1: 'err', param2: `e${i}` })));
    expect((await post('errs', 'new_messages', errs, 'application/json')).status).toBe(200);
    const count = async (state: string) => ((await (await fetch(`${w!.base}/q/errs.json`)).json()) as Record<string, number>)[`${state}_size`];
    await waitFor(async () => (await count('err')) === 40, 'the 40 messages to end in err', 30_000);
    fillDisk(filler);
    const r = await partial(await post('errs', 'requeue_errs', 'x_format=json'), 'requeued');
    expect(r.total).toBe(40);
    expect(r.failures.every((f) => typeof f.id === 'string')).toBe(true);
    // What the report says failed is still in err; the rest were requeued (and may already have run to err again).
    const stillErr = await messageIds(w!.root, 'errs');
    for (const f of r.failures) expect(stillErr).toContain(f.id);
    const text = await post('errs', 'requeue_errs', '');
    expect(text.status).toBe(507);
    expect(await text.text()).toMatch(/^507 - Couldn't requeue errs\. \["fail", "\d+ of \d+ messages were not requeued \(/);
    await fsp.rm(filler);

    const tagged = JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ param1: `t${i}`, tags: ['batch'] })));
    expect((await post('full', 'new_messages', tagged, 'application/json')).status).toBe(200);
    fillDisk(filler);
    const c = await partial(await post('full', 'cancel_tagged', 'x_format=json&tag=batch'), 'cancelled');
    expect(c.total).toBe(30);
    for (const f of c.failures.slice(0, 5)) expect(await (await fetch(`${w!.base}/q/full/${f.id}/state.json`)).json()).toEqual(['que']);
    await fsp.rm(filler);
  });
});
