// IdempotencyKeys alone, on a real journal file and an injected clock: expiry and compaction while a queue runs.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { IdempotencyKeys } from '../../../src/queue/coordination/idempotency.js';
import { DirSync } from '../../../src/spool/durable.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-keys-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

function keys(now: { t: number }, windowMs = 1000) {
  const file = path.join(dir, 'idempotency.jsonl');
  const made = new Set<string>();
  const k = new IdempotencyKeys({
    file,
    windowMs: () => windowMs,
    now: () => now.t,
    exists: async (id) => made.has(id),
    dirSync: new DirSync(),
    log: silentLogger(),
  });
  let n = 0;
  const create = (key: string) =>
    k.once(key, async (record) => {
      const id = `m${++n}`;
      made.add(id);
      await record(id);
      return id;
    });
  return { k, file, create };
}

const lines = async (file: string) => (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length;

describe('IdempotencyKeys', () => {
  it('expired keys leave the journal while the queue runs, once it holds twice the live keys plus 1000', async () => {
    const now = { t: 0 };
    const { k, file, create } = keys(now);
    for (let i = 0; i < 600; i++) await create(`old-${i}`);
    now.t = 5000; // every old key is out of the window
    for (let i = 0; i < 401; i++) await create(`new-${i}`);
    await k.close();
    // 1,001 lines crossed 2 × 0 + 1000: the rewrite kept only the 401 keys in the window.
    expect(await lines(file)).toBe(401);
    expect((await create('old-1')).created).toBe(true);
    expect(await create('new-1')).toEqual({ id: 'm602', created: false });
    await k.close();
  });

  it("a key holds for exactly its window: still the same message at the window's end, a new one a millisecond later", async () => {
    const now = { t: 0 };
    const { k, create } = keys(now, 1000);
    expect(await create('a')).toEqual({ id: 'm1', created: true });
    now.t = 1000;
    expect(await create('a')).toEqual({ id: 'm1', created: false });
    now.t = 1001;
    expect(await create('a')).toEqual({ id: 'm2', created: true });
    await k.close();
  });

  it('concurrent creates with one key make one message', async () => {
    const { k, create } = keys({ t: 0 });
    const all = await Promise.all(Array.from({ length: 20 }, () => create('same')));
    expect(new Set(all.map((r) => r.id))).toEqual(new Set(['m1']));
    expect(all.filter((r) => r.created)).toHaveLength(1);
    await k.close();
  });

  it('a journal that cannot be written still answers the message (it is durable) and holds the key in memory', async () => {
    const { k, create } = keys({ t: 0 });
    await fs.mkdir(path.join(dir, 'idempotency.jsonl'));
    expect(await create('a')).toEqual({ id: 'm1', created: true });
    expect(await create('a')).toEqual({ id: 'm1', created: false });
    await k.close();
  });
});
