// Cleaner parts on a plain directory tree: which hash dirs are old (UTC), removal without a queue process, relay trim.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanQueue, cleanTrash, summary, trimRelayed, type CleanerDeps } from '../../src/builtins/cleaner.js';
import { oldHashIds } from '../../src/builtins/hash-age.js';
import { queuePaths } from '../../src/config/paths.js';
import { hashList } from '../../src/spool/hash-dir.js';
import { DAY, HOUR, drafted, errored, hashed, trashed } from './cleaner-fixtures.js';

let root: string;
const NOW = Date.UTC(2026, 10, 21, 12, 30, 0);

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-cleaner-'));
  for (const q of ['test', 'relay']) for (const s of Object.values(queuePaths(root, q).state)) await fs.mkdir(s, { recursive: true });
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

function deps(progress: string[] = []): CleanerDeps {
  return {
    root,
    now: () => NOW,
    // No queue process answers: the cleaner works on the directories itself.
    queues: { state: async () => 'none', deleteMessage: async () => 'failed' },
    progress: (t) => progress.push(t),
    log: () => undefined,
  };
}

describe('oldHashIds', () => {
  it('takes whole days, hours and minutes that ended before the cutoff, in UTC', async () => {
    const dir = queuePaths(root, 'test').state.done;
    const cutoff = NOW - 3 * DAY;
    const old = [
      await hashed(root, 'test', 'done', NOW, 10 * DAY),
      await hashed(root, 'test', 'done', NOW, 3 * DAY + 2 * HOUR),
      await hashed(root, 'test', 'done', NOW, 3 * DAY + 5 * 60_000),
    ];
    const kept = [await hashed(root, 'test', 'done', NOW, 3 * DAY - 5 * 60_000), await hashed(root, 'test', 'done', NOW, HOUR)];
    const r = await oldHashIds(dir, cutoff);
    expect(r.ids.sort()).toEqual(old.sort());
    expect(kept.every((id) => !r.ids.includes(id))).toBe(true);
    // Whole old days and hours are listed for removal after their messages, deepest first.
    expect(r.dirs.filter((d) => /\/\d{8}$/.test(d))).toEqual([path.join(dir, old.sort()[0].slice(0, 8))]);
  });
});

describe('cleanQueue without a queue process', () => {
  it('removes old done, relayed and acknowledged errors; keeps new ones and unacknowledged errors', async () => {
    const oldDone = await hashed(root, 'test', 'done', NOW, 5 * DAY);
    const newDone = await hashed(root, 'test', 'done', NOW, DAY);
    await hashed(root, 'test', 'relayed', NOW, 4 * DAY);
    const oldAck = await errored(root, 'test', NOW, 5 * DAY, true);
    const newAck = await errored(root, 'test', NOW, DAY, true);
    const oldErr = await errored(root, 'test', NOW, 5 * DAY, false);
    const r = await cleanQueue(deps(), 'test', NOW - 3 * DAY);
    expect(r).toEqual({ queue: 'test', done: 1, relayed: 1, errAcked: 1, prep: 0, failed: 0 });
    const q = queuePaths(root, 'test').state;
    expect(await hashList(q.done)).toEqual([newDone]);
    expect(await hashList(q.relayed)).toEqual([]);
    expect((await fs.readdir(q.err)).sort()).toEqual([newAck, oldErr].sort());
    expect(await fs.readdir(q.done)).toEqual([newDone.slice(0, 8)]);
    expect(oldDone).not.toBe(newDone);
    expect(oldAck).not.toBe(newAck);
  });

  it('removes prep drafts made before the cutoff and never committed; keeps newer ones and a create under way', async () => {
    const old = await drafted(root, 'test', NOW, 5 * DAY);
    const fresh = await drafted(root, 'test', NOW, DAY);
    const prep = queuePaths(root, 'test').state.prep;
    // A create's private directory (renamed into place when it is done) is no id, whatever its age.
    await fs.mkdir(path.join(prep, '_20200101.0000.00.000.1.1'));
    const r = await cleanQueue(deps(), 'test', NOW - 3 * DAY);
    expect(r).toMatchObject({ prep: 1, failed: 0 });
    expect((await fs.readdir(prep)).sort()).toEqual(['_20200101.0000.00.000.1.1', fresh].sort());
    expect(old).not.toBe(fresh);
  });

  it('keeps a prep draft a day at least, whatever the days to keep: a client may be between its prep and its commit', async () => {
    const recent = await drafted(root, 'test', NOW, HOUR);
    const dayOld = await drafted(root, 'test', NOW, DAY + HOUR);
    expect(await cleanQueue(deps(), 'test', NOW)).toMatchObject({ prep: 1 });
    expect(await fs.readdir(queuePaths(root, 'test').state.prep)).toEqual([recent]);
    expect(dayOld).not.toBe(recent);
  });

  it('a DOWN queue is skipped', async () => {
    await hashed(root, 'test', 'done', NOW, 5 * DAY);
    const r = await cleanQueue({ ...deps(), queues: { state: async () => 'down', deleteMessage: async () => 'failed' } }, 'test', NOW - 3 * DAY);
    expect(r.skipped).toBe('queue is DOWN');
    expect(await hashList(queuePaths(root, 'test').state.done)).toHaveLength(1);
  });
});

describe('trash and relay trim', () => {
  it("removes trash entries deleted before the cutoff (all, or one queue's)", async () => {
    const old = await trashed(root, 'gone', NOW, 10 * DAY);
    const oldOther = await trashed(root, 'other', NOW, 10 * DAY);
    const fresh = await trashed(root, 'gone', NOW, DAY);
    expect(await cleanTrash(deps(), NOW - 3 * DAY, 'gone')).toBe(1);
    expect((await fs.readdir(path.join(root, 'queues', '.trash'))).sort()).toEqual([fresh, oldOther].sort());
    expect(await cleanTrash(deps(), NOW - 3 * DAY)).toBe(1);
    expect(old).not.toBe(fresh);
  });

  it('keeps only the newest N relayed messages of relay', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await hashed(root, 'relay', 'relayed', NOW, i * 10 * 60_000));
    const r = await trimRelayed(deps(), 4);
    expect(r.relayed).toBe(2);
    expect(await hashList(queuePaths(root, 'relay').state.relayed)).toEqual(ids.slice(0, 4));
  });

  it('summarises a run on one line', () => {
    expect(
      summary({
        days: 3,
        trash: 2,
        relayTrimmed: 5,
        queues: [
          { queue: 'a', done: 1, relayed: 2, errAcked: 3, prep: 0, failed: 0 },
          { queue: 'b', done: 0, relayed: 0, errAcked: 0, prep: 0, failed: 1, skipped: 'queue is DOWN' },
        ],
      }),
    ).toBe('cleaned 2 queues keeping 3 days: removed 1 done, 7 relayed, 3 acknowledged errors, 2 trash entries; 1 could not be removed; skipped (DOWN): b');
    // Prep drafts are named only when there were some.
    expect(summary({ days: 3, trash: 0, relayTrimmed: 0, queues: [{ queue: 'a', done: 0, relayed: 0, errAcked: 0, prep: 4, failed: 0 }] })).toBe(
      'cleaned 1 queues keeping 3 days: removed 0 done, 0 relayed, 0 acknowledged errors, 0 trash entries, 4 prep drafts',
    );
  });
});
