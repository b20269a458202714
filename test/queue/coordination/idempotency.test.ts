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

function keys(now: { t: number }, windowMs = 1000, existing: string[] = []) {
  const file = path.join(dir, 'idempotency.jsonl');
  const made = new Set<string>(existing);
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
  return { k, file, made, create };
}

const lines = async (file: string) => (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).length;

describe('IdempotencyKeys', () => {
  it('expired keys leave the journal while the queue runs, once it holds twice the live keys plus 1000', async () => {
    const now = { t: 0 };
    const { k, file, create } = keys(now);
    for (let i = 0; i < 600; i++) await create(`old-${i}`);
    now.t = 4000;
    await create('edge'); // m601: exactly at the window's edge when the journal is rewritten
    now.t = 5000; // every old key is out of the window
    for (let i = 0; i < 399; i++) await create(`new-${i}`);
    await k.close();
    // 1,000 lines: not yet past 2 × 0 + 1000, so nothing was rewritten, expired keys and all.
    expect(await lines(file)).toBe(1000);
    await create('new-399');
    await k.close();
    // The 1,001st crossed it: the rewrite kept only the 401 keys in the window, the one at its edge too.
    expect(await lines(file)).toBe(401);
    expect(await create('edge')).toEqual({ id: 'm601', created: false });
    expect((await create('old-1')).created).toBe(true);
    expect(await create('new-1')).toEqual({ id: 'm603', created: false });
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

  it('concurrent creates whose files take a while to write make one message', async () => {
    const { k } = keys({ t: 0 });
    let n = 0;
    const all = await Promise.all(
      Array.from({ length: 5 }, () =>
        k.once('slow', async (record) => {
          const id = `m${++n}`;
          await new Promise((resolve) => setImmediate(resolve));
          await record(id);
          return id;
        }),
      ),
    );
    expect(all).toEqual([{ id: 'm1', created: true }, ...Array.from({ length: 4 }, () => ({ id: 'm1', created: false }))]);
    expect(n).toBe(1);
    await k.close();
  });

  it('a key outlives a restart: journalled with its message, loaded again', async () => {
    const now = { t: 0 };
    const before = keys(now, 1000);
    expect(await before.create('a')).toEqual({ id: 'm1', created: true });
    await before.k.close();
    now.t = 500;
    const after = keys(now, 1000, ['m1']);
    await after.k.load();
    expect(await after.create('a')).toEqual({ id: 'm1', created: false });
    await after.k.close();
  });

  it('a deleted message frees its key: the next create with it makes a new one', async () => {
    const { k, made, create } = keys({ t: 0 });
    expect(await create('a')).toEqual({ id: 'm1', created: true });
    made.delete('m1');
    expect(await create('a')).toEqual({ id: 'm2', created: true });
    expect(await create('a')).toEqual({ id: 'm2', created: false });
    await k.close();
  });

  it("two creates that both found the key's message deleted make one new message: the second waits for the first's", async () => {
    const file = path.join(dir, 'idempotency.jsonl');
    const made = new Set<string>();
    const lookups: (() => void)[] = [];
    const k = new IdempotencyKeys({
      file,
      windowMs: () => 1000,
      now: () => 0,
      // Held until the test lets it answer, so that both creates are inside their lookup at once.
      exists: (id) => new Promise((resolve) => lookups.push(() => resolve(made.has(id)))),
      dirSync: new DirSync(),
      log: silentLogger(),
    });
    let n = 0;
    // Like a real create: the message's files are written (once `gate` opens) before its key is recorded.
    const createAfter = (gate: Promise<void>) =>
      k.once('a', async (record) => {
        const id = `m${++n}`;
        await gate;
        made.add(id);
        await record(id);
        return id;
      });
    expect(await createAfter(Promise.resolve())).toEqual({ id: 'm1', created: true });
    made.delete('m1');
    let reWrite = () => {};
    const rewriting = new Promise<void>((resolve) => (reWrite = resolve));
    const slow = () => createAfter(rewriting);
    const first = slow();
    const second = slow();
    await expect.poll(() => lookups.length).toBe(2);
    for (const answer of lookups.splice(0)) answer();
    reWrite();
    expect(await Promise.all([first, second])).toEqual([
      { id: 'm2', created: true },
      { id: 'm2', created: false },
    ]);
    expect(n).toBe(2);
    await k.close();
  });
  it("a create that found the key's message deleted, while another made the new one meanwhile, answers that one", async () => {
    const made = new Set<string>();
    const lookups: (() => void)[] = [];
    const k = new IdempotencyKeys({
      file: path.join(dir, 'idempotency.jsonl'),
      windowMs: () => 1000,
      now: () => 0,
      exists: (id) => new Promise((resolve) => lookups.push(() => resolve(made.has(id)))),
      dirSync: new DirSync(),
      log: silentLogger(),
    });
    let n = 0;
    const create = () =>
      k.once('a', async (record) => {
        const id = `m${++n}`;
        made.add(id);
        await record(id);
        return id;
      });
    expect(await create()).toEqual({ id: 'm1', created: true });
    made.delete('m1');
    const slow = create();
    const fast = create();
    await expect.poll(() => lookups.length).toBe(2);
    // The second lookup answers first, and its create runs to its end.
    lookups[1]();
    expect(await fast).toEqual({ id: 'm2', created: true });
    lookups[0]();
    // The first looks again, and finds m2.
    await expect.poll(() => lookups.length).toBe(3);
    lookups[2]();
    expect(await slow).toEqual({ id: 'm2', created: false });
    await k.close();
  });
});

describe('IdempotencyKeys.load', () => {
  const line = (r: object) => `${JSON.stringify(r)}\n`;

  it('keeps the keys still in the window (one at its very edge too) and rewrites the journal without the rest', async () => {
    const now = { t: 10_000 };
    const { k, file, create } = keys(now, 1000, ['m-old', 'm-edge', 'm-new']);
    const kept = [line({ k: 'edge', id: 'm-edge', at: 9000 }), line({ k: 'new', id: 'm-new', at: 9500 })];
    const dropped = [
      line({ k: 'old', id: 'm-old', at: 8999 }),
      line({ k: 7, id: 'm-new', at: 9500 }),
      line({ k: 'no-id', id: 7, at: 9500 }),
      line({ k: 'text-at', id: 'm-new', at: '9500' }),
    ];
    // The last line torn by a crash mid-append.
    await fs.writeFile(file, `${dropped[0]}${kept[0]}\n${dropped.slice(1).join('')}${kept[1]}{"k":"torn","id":"m`);
    await k.load();
    expect(await fs.readFile(file, 'utf8')).toBe(kept.join(''));
    expect(await create('edge')).toEqual({ id: 'm-edge', created: false });
    expect(await create('new')).toEqual({ id: 'm-new', created: false });
    for (const key of ['old', 'no-id', 'text-at', 'torn']) expect((await create(key)).created).toBe(true);
    await k.close();
  });

  it('leaves a journal with nothing to drop as it is, and starts without one', async () => {
    const { k, file } = keys({ t: 0 });
    await k.load();
    await expect(fs.stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
    const text = line({ k: 'a', id: 'm1', at: 0 });
    await fs.writeFile(file, text);
    const before = (await fs.stat(file)).ino;
    await k.load();
    expect((await fs.stat(file)).ino).toBe(before);
    await k.close();
  });

  it('refuses a journal it cannot read (not a missing one)', async () => {
    const { k, file } = keys({ t: 0 });
    await fs.mkdir(file);
    await expect(k.load()).rejects.toMatchObject({ code: 'EISDIR' });
    await k.close();
  });
});
