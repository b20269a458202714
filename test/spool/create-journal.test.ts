// CreateJournal on a real directory with a syncfs the test holds: when records count, when checkpoints run, what they share and delete.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CreateJournal, readJournal } from '../../src/spool/create-journal.js';
import { encodeRecord } from '../../src/spool/journal-records.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { journalDirPerTest, rec, segmentsIn } from './create-journal-harness.js';
import { ioError } from '../helpers/no-space-fs.js';

let dir = '';
journalDirPerTest((d) => (dir = d));
const segments = () => segmentsIn(dir);

/** syncfs calls wait until the test ends them (`release`, or `fail` with an error); `arrived` resolves at the next call. */
function heldSyncfs() {
  const calls: { release: () => void; fail: (err: Error) => void }[] = [];
  let arrive: (() => void) | null = null;
  const fsHeld: SpoolFs = {
    ...nodeSpoolFs,
    syncfs: () =>
      new Promise<void>((release, fail) => {
        calls.push({ release, fail });
        arrive?.();
      }),
  };
  return {
    fs: fsHeld,
    calls,
    arrived: () => new Promise<void>((r) => (arrive = r)),
  };
}

/** A journal on a held syncfs (heldSyncfs), open, with record 1 appended. */
async function heldWithRecord(opts: { maxDelayMs?: number } = {}) {
  const held = heldSyncfs();
  const j = new CreateJournal({ dir, fs: held.fs, ...opts });
  await j.open();
  await j.append(rec(1));
  return { held, j };
}

describe('CreateJournal', () => {
  it('an append resolves once its record is on disk; records appended together share the segment', async () => {
    const j = new CreateJournal({ dir, fs: nodeSpoolFs });
    await j.open();
    await Promise.all([1, 2, 3].map((n) => j.append(rec(n))));
    expect(await segments()).toEqual(['000000000001.log']);
    expect((await readJournal(dir)).records).toEqual([rec(1), rec(2), rec(3)]);
    expect(j.pending).toBe(true);
    await j.close();
    expect(await segments()).toEqual([]);
    expect(j.pending).toBe(false);
  });

  it('numbers new segments after the ones a crash left (replayed before any new create)', async () => {
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, '000000000041.log'), '');
    await fs.writeFile(path.join(dir, 'notes.txt'), '');
    const j = new CreateJournal({ dir, fs: nodeSpoolFs });
    await j.open();
    await j.append(rec(1));
    expect(await segments()).toEqual(['000000000041.log', '000000000042.log', 'notes.txt']);
  });

  it("only <12 digits>.log is a segment: an operator's copies and other names in the dir are never replayed", async () => {
    await fs.mkdir(dir);
    const line = (n: number) => encodeRecord(rec(n));
    await fs.writeFile(path.join(dir, '000000000001.log'), line(1));
    for (const [n, name] of ['000000000002.log.bak', 'x000000000003.log', '4.log', 'abcdefghijkl.log', '0000000000005.log'].entries())
      await fs.writeFile(path.join(dir, name), line(n + 2));
    expect(await readJournal(dir)).toEqual({ files: [path.join(dir, '000000000001.log')], records: [rec(1)], damaged: 0 });
  });

  it('callers arriving while a checkpoint runs share the next one; it covers what they appended; with nothing new they share the running one', async () => {
    const { held, j } = await heldWithRecord();
    const arrived = held.arrived();
    const first = j.checkpoint();
    await arrived;
    // Sealed: the running checkpoint covers record 1, and a caller with nothing newer shares it.
    expect(j.checkpoint()).toBe(first);
    await j.append(rec(2));
    const second = j.checkpoint();
    const third = j.checkpoint();
    expect(second).toBe(third);
    expect(second).not.toBe(first);
    expect(await segments()).toEqual(['000000000001.log', '000000000002.log']);
    const next = held.arrived();
    held.calls[0].release();
    await first;
    expect(await segments()).toEqual(['000000000002.log']);
    await next;
    expect(held.calls).toHaveLength(2);
    held.calls[1].release();
    await second;
    // Left: the last segment, emptied for the next records by the checkpoint that left none current.
    expect(await segments()).toEqual(['000000000002.log']);
    expect((await readJournal(dir)).records).toEqual([]);
    // Nothing pending: no sync at all.
    await j.checkpoint();
    expect(held.calls).toHaveLength(2);
  });

  it('a failed checkpoint keeps its segments and says so; the next one clears them all: the last emptied for the next records, the others deleted', async () => {
    const held = heldSyncfs();
    const errors: string[] = [];
    const j = new CreateJournal({ dir, fs: held.fs, onError: (err) => errors.push(err.message), maxRecords: 2 });
    await j.open();
    let arrived = held.arrived();
    // The second record fills the segment: a checkpoint starts in the background.
    await Promise.all([j.append(rec(1)), j.append(rec(2))]);
    await arrived;
    held.calls[0].fail(new Error('EIO: i/o error, syncfs'));
    await j.append(rec(3));
    expect(errors).toEqual(['EIO: i/o error, syncfs']);
    expect(await segments()).toEqual(['000000000001.log', '000000000002.log']);
    arrived = held.arrived();
    const retry = j.checkpoint();
    await arrived;
    held.calls[1].release();
    await retry;
    expect(await segments()).toEqual(['000000000002.log']);
    expect((await readJournal(dir)).records).toEqual([]);
  });

  it('a checkpoint asked for after one that failed, with nothing appended since, runs again and clears the segment', async () => {
    const { held, j } = await heldWithRecord({ maxDelayMs: 3_600_000 });
    let arrived = held.arrived();
    const first = j.checkpoint();
    await arrived;
    held.calls[0].fail(ioError());
    await expect(first).rejects.toThrow('EIO');
    expect(j.pending).toBe(true);
    arrived = held.arrived();
    const retry = j.checkpoint();
    await arrived;
    held.calls[1].release();
    await retry;
    expect(j.pending).toBe(false);
    expect((await readJournal(dir)).records).toEqual([]);
  });

  it('a checkpoint syncs the filesystem only once every append to its segments has its answer', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const holding: SpoolFs = {
      ...nodeSpoolFs,
      // The append's write and fdatasync through the handle, whose fdatasync the test holds.
      journalSync: undefined,
      syncfs: (p) => (order.push('syncfs'), nodeSpoolFs.syncfs(p)),
      open: async (p, flags, mode) => {
        const h = await nodeSpoolFs.open(p, flags, mode);
        const datasync = () => held.then(() => h.datasync()).then(() => void order.push('fdatasync'));
        return p.endsWith('.log') ? Object.assign(Object.create(h) as typeof h, { datasync }) : h;
      },
    };
    const j = new CreateJournal({ dir, fs: holding });
    await j.open();
    const appended = j.append(rec(1));
    const checkpointed = j.checkpoint();
    release();
    await Promise.all([appended, checkpointed]);
    // The record's fdatasync, the checkpoint's syncfs, then the emptying's fdatasync.
    expect(order).toEqual(['fdatasync', 'syncfs', 'fdatasync']);
    await j.close();
  });

  it.each([
    ['the first record of a segment within maxDelayMs', { maxDelayMs: 20 }, 1],
    ['as soon as a segment holds maxRecords records, long before maxDelayMs', { maxRecords: 3, maxDelayMs: 3_600_000 }, 3],
  ])('a checkpoint follows %s, with no caller asking', async (_, opts, n) => {
    const held = heldSyncfs();
    const j = new CreateJournal({ dir, fs: held.fs, ...opts });
    await j.open();
    const arrived = held.arrived();
    const records = Array.from({ length: n }, (_, i) => rec(i + 1));
    await Promise.all(records.slice(0, -1).map((r) => j.append(r)));
    expect(held.calls).toEqual([]);
    await j.append(records.at(-1)!);
    await arrived;
    held.calls[0].release();
    await j.close();
    expect(await segments()).toEqual([]);
  });

  it("a journal dir removed during a stop's checkpoint: the stop still ends, its segments gone with the dir", async () => {
    const { held, j } = await heldWithRecord();
    const arrived = held.arrived();
    const closed = j.close();
    await arrived;
    await fs.rm(dir, { recursive: true });
    held.calls[0].release();
    await closed;
    expect(j.pending).toBe(false);
  });

  it('a segment that cannot be made refuses its appends; the next append makes a new one', async () => {
    let refuse = true;
    const flaky: SpoolFs = {
      ...nodeSpoolFs,
      open: (p, flags, mode) =>
        refuse && p.endsWith('.log')
          ? Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' }))
          : nodeSpoolFs.open(p, flags, mode),
    };
    const j = new CreateJournal({ dir, fs: flaky });
    await j.open();
    await expect(j.append(rec(1))).rejects.toMatchObject({ code: 'ENOSPC' });
    refuse = false;
    await j.append(rec(2));
    expect((await readJournal(dir)).records).toEqual([rec(2)]);
    await j.close();
    expect(await segments()).toEqual([]);
  });

  it("a new segment makes the journal dir only when it is missing, and again after an operator removed it, its name and the segment's made durable", async () => {
    const mkdirs: string[] = [];
    const fsynced: string[] = [];
    const counting: SpoolFs = {
      ...nodeSpoolFs,
      mkdir: (p, o) => (mkdirs.push(String(p)), nodeSpoolFs.mkdir(p, o)),
      fsyncPath: (p) => (fsynced.push(p), nodeSpoolFs.fsyncPath!(p)),
    };
    // No checkpoint but those the test asks for.
    const j = new CreateJournal({ dir, fs: counting, maxDelayMs: 3_600_000 });
    await j.open();
    await j.append(rec(1));
    expect(mkdirs).toEqual([dir]);
    await j.checkpoint();
    await j.append(rec(2));
    expect(mkdirs).toEqual([dir]);
    await j.checkpoint();
    await fs.rm(dir, { recursive: true });
    fsynced.length = 0;
    await j.append(rec(3));
    expect(mkdirs).toEqual([dir, dir]);
    // The dir's name in its parent, then the segment's name in the dir: both before the record counts.
    expect(fsynced).toEqual([path.dirname(dir), dir]);
    expect((await readJournal(dir)).records).toEqual([rec(3)]);
    await j.close();
    expect(await segments()).toEqual([]);
  });
});
