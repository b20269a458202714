// Expiry (rq-beyond §B4): max_age after due and expire_at, driven by the deadline heap, in any admin state, and at load.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
const now = () => Date.now() / 1000;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'eq', { num_workers: 1 });
  await fs.writeFile(path.join(t.root, 'config', 'eq.pause'), '');
  q = await QueueProc.start(t.root, 'eq');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

async function history(m: { path: string }): Promise<Record<string, unknown>[]> {
  return (await fs.readFile(path.join(t.root, m.path, 'history'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('expiry', () => {
  it('max_age on a paused queue: err expired at due + max_age, never started', async () => {
    const sent = now();
    const id = await q.send({ param1: 'done', max_age: 0.5 });
    const m = await q.waitState(id, ['err'], 5000);
    expect(now() - sent).toBeGreaterThanOrEqual(0.45);
    expect(m.outcome).toBe('expired');
    expect(m.status).toMatch(/^err - EXPIRED - not started by \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(max_age 0\.5s after due\)$/);
    expect((await history(m)).map((l) => [l.from, l.to, l.actor])).toEqual([['que', 'err', 'expiry']]);
  });

  it('expire_at: the earlier bound wins and is named', async () => {
    const id = await q.send({ param1: 'done', max_age: 3600, expire_at: now() + 0.4 });
    const m = await q.waitState(id, ['err'], 5000);
    expect(m.status).toMatch(/\(expire_at\)$/);
  });

  it('max_age counts from the current due: a message due later expires later', async () => {
    const early = await q.send({ param1: 'done', max_age: 0.3 });
    const late = await q.send({ param1: 'done', max_age: 0.3, due: Math.ceil(now()) + 2 });
    await q.waitState(early, ['err'], 5000);
    expect(await q.state(late)).toBe('que');
    await q.cmd('cancel_message', { msg_id: late });
  });

  it('a message that started in time is not expired (a run is governed by timeout)', async () => {
    await fs.rm(path.join(t.root, 'config', 'eq.pause'));
    await waitFor(async () => (await q.cmd('status'))[0] === 'UP', 'UP');
    const id = await q.send({ param1: 'slow', param2: '0.6', max_age: 0.2 });
    expect((await q.waitState(id, ['done', 'err'])).status).toBe('done - slept');
    await fs.writeFile(path.join(t.root, 'config', 'eq.pause'), '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'PAUSE', 'PAUSE');
  });

  it('a message past its deadline at a restart expires at load and never runs', async () => {
    const id = await q.send({ param1: 'done', max_age: 1 });
    await q.kill9();
    // Let the deadline pass while the queue is down: the check is on the file's due (or create) + max_age.
    const msgFile = path.join(q.paths.state.que, id, 'msg');
    const stored = JSON.parse(await fs.readFile(msgFile, 'utf8'));
    stored.max_age = 0.001;
    await fs.writeFile(msgFile, JSON.stringify(stored));
    await fs.rm(path.join(t.root, 'config', 'eq.pause'));
    q = await QueueProc.start(t.root, 'eq');
    const m = await q.waitState(id, ['err', 'done']);
    expect(m).toMatchObject({ state: 'err', outcome: 'expired' });
    expect((await history(m)).some((l) => l.to === 'run')).toBe(false);
  });

  it('the queue config max_age is the default; bad values are refused', async () => {
    expect(await q.cmd('create_message', { dest: 'eq', expire_at: Math.floor(now()) - 12 })).toEqual([
      'fail',
      expect.stringMatching(/^expire_at: expected a time in the future, received "\d+ \(1[23] s ago\)"$/),
    ]);
    expect(await q.cmd('create_message', { dest: 'eq', max_age: 0 })).toEqual(['fail', 'max_age: expected seconds > 0 and <= 3153600000, received 0']);
    expect(await q.cmd('create_message', { dest: 'eq', expire_at: 'tomorrow' })).toEqual([
      'fail',
      'expire_at: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received "tomorrow"',
    ]);
  });
});
