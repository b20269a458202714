// A queue whose spool is a small tmpfs filled while A runs and B waits: A's end gives a page back, yet DISK FULL holds and B does not start until there is room; then both end with their status and history whole.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc | undefined;
let unmount: (() => Promise<void>) | undefined;
let mountError = '';
let gateDir = '';

beforeAll(async () => {
  t = await makeRoot();
  gateDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-gate-'));
  const dir = path.join(t.root, 'queues', 'fq');
  await fsp.mkdir(dir, { recursive: true });
  try {
    unmount = await mountTmpfs(dir, '3m', 'rq-full-ends');
  } catch (err) {
    mountError = (err as Error).message.trim();
    return;
  }
  await addQueue(t.root, 'fq', { num_workers: 1 });
  q = await QueueProc.start(t.root, 'fq');
}, 30_000);
afterAll(async () => {
  await q?.stop();
  await unmount?.();
  await t?.cleanup();
  await fsp.rm(gateDir, { recursive: true, force: true });
});

/** Resolves once a room probe begun after this call is over: its `.disk-probe` made, then removed (one rename event each). */
function nextProbe(dir: string): Promise<void> {
  return new Promise((resolve) => {
    let events = 0;
    const w = fs.watch(dir, (ev, name) => {
      if (ev !== 'rename' || name !== '.disk-probe') return;
      events += 1;
      if (events === wanted) {
        w.close();
        resolve();
      }
    });
    // A probe already under way adds its removal first.
    const wanted = fs.existsSync(path.join(dir, '.disk-probe')) ? 3 : 2;
  });
}

async function statusOf(id: string): Promise<string> {
  const [, view] = await q!.cmd('get_message_status', { msg_id: id });
  return view.status;
}

describe('a full tmpfs while A runs and B waits', () => {
  it('holds B while a freed page is all there is, and keeps every status and history line', async (ctx) => {
    if (!q) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
    const gate = path.join(gateDir, 'open');
    const a = await q.send({ param1: 'until_file', param2: gate });
    await q.waitState(a, ['run']);
    await waitFor(async () => (await statusOf(a)).includes('waiting for'), 'A to say it waits');
    const b = await q.send({ param1: 'done' });
    const filler = path.join(q.paths.dir, 'filler');
    fillDisk(filler);
    expect((await q.cmd('create_message', { dest: 'fq', param1: 'done' }))[0]).toBe('fail');
    expect((await q.cmd('status'))[0]).toBe('DISK FULL');

    // A ends: its texts fit the pages its files have, and its pid file gives one page back.
    await fsp.writeFile(gate, '');
    await q.waitState(a, ['done']);
    await nextProbe(q.paths.dir);
    expect((await q.cmd('status'))[0]).toBe('DISK FULL');
    expect(await q.state(b)).toBe('que');
    expect(await statusOf(a)).toBe(`done - ${gate} appeared`);

    await fsp.rm(filler);
    await q.waitState(b, ['done'], 30_000);
    expect(await statusOf(b)).toBe('done - done sleeping');
    const history = (await q.cmd('get_history', { msg_id: b }))[1] as Array<{ from?: string; to?: string }>;
    expect(history.map((e) => `${e.from}→${e.to}`)).toEqual(['null→que', 'que→run', 'run→done']);
    await waitFor(async () => (await q!.cmd('status'))[0] === 'UP', 'the queue UP');
  }, 60_000);
});
