// CreateJournal on a real directory with a syncfs the test holds: when records count, when checkpoints run, what they share and delete.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateJournal, readJournal } from '../../src/spool/create-journal.js';
import type { JournalRecord } from '../../src/spool/journal-records.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { recordingFs } from '../helpers/recording-fs.js';

let dir: string;
beforeEach(async () => {
  dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'rq-journal-')), 'journal');
});
afterEach(() => fs.rm(path.dirname(dir), { recursive: true, force: true }));

const rec = (n: number): JournalRecord => ({ id: `20261126.1200.00.000.${n}`, state: 'que', msg: { msg_id: `20261126.1200.00.000.${n}`, dest: 'q' } as never });
const segments = async () => (await fs.readdir(dir)).sort();

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

  it('callers arriving while a checkpoint runs share the next one; it covers what they appended; with nothing new they share the running one', async () => {
    const held = heldSyncfs();
    const j = new CreateJournal({ dir, fs: held.fs });
    await j.open();
    await j.append(rec(1));
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

  it('a checkpoint follows the first record of a segment within maxDelayMs, with no caller asking', async () => {
    const held = heldSyncfs();
    const j = new CreateJournal({ dir, fs: held.fs, maxDelayMs: 20 });
    await j.open();
    const arrived = held.arrived();
    await j.append(rec(1));
    await arrived;
    held.calls[0].release();
    await j.close();
    expect(await segments()).toEqual([]);
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
  it('a checkpoint that leaves no segment current empties the last one for the next records: no file is made, and the next record waits for its own write and sync only', async () => {
    const disk = recordingFs(path.dirname(dir));
    const j = new CreateJournal({ dir, fs: disk.fs });
    await j.open();
    await j.append(rec(1));
    disk.clear();
    await j.checkpoint();
    // Its name is durable already: the emptying is made durable by the file's own sync, and no dir is synced.
    const ops = disk.only('syncfsed', 'open', 'truncate', 'rm', 'fsynced').map((l) => l.replace('journal/000000000001.log', '1'));
    expect(ops).toEqual(['syncfsed journal', 'open 1', 'truncate 1', 'fsynced 1']);
    disk.clear();
    await j.append(rec(2));
    expect(disk.log).toEqual(['write journal/000000000001.log', 'fsync journal/000000000001.log', 'fsynced journal/000000000001.log']);
    expect((await readJournal(dir)).records).toEqual([rec(2)]);
    // A stop leaves no journal: the checkpoint keeps no spare, and one kept before goes, durably.
    await j.checkpoint();
    expect(await segments()).toEqual(['000000000001.log']);
    disk.clear();
    await j.close();
    expect(await segments()).toEqual([]);
    expect(disk.only('rm', 'fsynced')).toEqual(['rm journal/000000000001.log', 'fsynced journal']);
  });

  /**
   * A journal whose checkpoint's spare (segment 1, emptied) is opened while an append makes its own
   * segment (2): the spare is held until the append is durable. `failSyncfs` fails every later syncfs.
   */
  async function spareBesideSegment() {
    let failing = false;
    let holdNext = false;
    let openCalled!: () => void;
    let release!: () => void;
    const called = new Promise<void>((r) => (openCalled = r));
    const held = new Promise<void>((r) => (release = r));
    const holding: SpoolFs = {
      ...nodeSpoolFs,
      syncfs: (p) => (failing ? Promise.reject(new Error('EIO: i/o error, syncfs')) : nodeSpoolFs.syncfs(p)),
      open: async (p, flags, mode) => {
        if (holdNext && p.endsWith('.log')) {
          holdNext = false;
          openCalled();
          await held;
        }
        return nodeSpoolFs.open(p, flags, mode);
      },
    };
    const j = new CreateJournal({ dir, fs: holding });
    await j.open();
    await j.append(rec(1));
    holdNext = true;
    const checkpointed = j.checkpoint();
    await called;
    await j.append(rec(2));
    release();
    await checkpointed;
    expect(await segments()).toEqual(['000000000001.log', '000000000002.log']);
    return { j, failSyncfs: () => (failing = true) };
  }

  it('a spare opened while an append made its own segment is kept by the next checkpoint, and a stop deletes it', async () => {
    const { j } = await spareBesideSegment();
    await j.checkpoint();
    expect(await segments()).toEqual(['000000000001.log']);
    await j.append(rec(3));
    expect((await readJournal(dir)).records).toEqual([rec(3)]);
    await j.close();
    expect(await segments()).toEqual([]);
  });

  it('a stop whose checkpoint fails still deletes the spare, and keeps the records for the replay', async () => {
    const { j, failSyncfs } = await spareBesideSegment();
    failSyncfs();
    await expect(j.close()).rejects.toThrow('EIO');
    expect(await segments()).toEqual(['000000000002.log']);
    expect((await readJournal(dir)).records).toEqual([rec(2)]);
  });

  it('a spare that cannot be checked refuses its appends and is closed; the next append makes a new segment', async () => {
    const closed: string[] = [];
    let badStat = true;
    const checking: SpoolFs = {
      ...nodeSpoolFs,
      open: async (p, flags, mode) => {
        const h = await nodeSpoolFs.open(p, flags, mode);
        if (!p.endsWith('.log')) return h;
        return Object.assign(Object.create(h) as typeof h, {
          stat: () => (badStat ? Promise.reject(Object.assign(new Error('EIO: i/o error, fstat'), { code: 'EIO' })) : h.stat()),
          close: () => (closed.push(path.basename(p)), h.close()),
        });
      },
    };
    const j = new CreateJournal({ dir, fs: checking });
    await j.open();
    await j.append(rec(1));
    await j.checkpoint();
    expect(await segments()).toEqual(['000000000001.log']);
    await expect(j.append(rec(2))).rejects.toMatchObject({ code: 'EIO' });
    expect(closed).toContain('000000000001.log');
    badStat = false;
    await j.append(rec(3));
    expect((await readJournal(dir)).records).toEqual([rec(3)]);
    await j.close();
    expect(await segments()).toEqual([]);
  });

  it('a checkpoint keeps no segment whose name was not made durable, nor one it cannot empty: a new one is made ahead, its name durable', async () => {
    const disk = recordingFs(path.dirname(dir));
    const fail = { dirSync: false, truncate: false };
    const eio = (call: string) => Promise.reject(Object.assign(new Error(`EIO: i/o error, ${call}`), { code: 'EIO' }));
    const open: SpoolFs['open'] = async (p, flags, mode) => {
      const h = await disk.fs.open(p, flags, mode);
      const o = Object.create(h) as typeof h;
      if (p.endsWith('.log')) return Object.assign(o, { truncate: (n: number) => (fail.truncate ? eio('ftruncate') : h.truncate(n)) });
      return p !== dir ? h : Object.assign(o, { sync: () => (fail.dirSync ? ((fail.dirSync = false), eio('fsync')) : h.sync()) });
    };
    const j = new CreateJournal({ dir, fs: { ...disk.fs, open } });
    await j.open();
    fail.dirSync = true;
    await expect(j.append(rec(1))).rejects.toMatchObject({ code: 'EIO' });
    await j.checkpoint();
    expect(await segments()).toEqual(['000000000002.log']);
    await j.append(rec(2));
    fail.truncate = true;
    disk.clear();
    await j.checkpoint();
    // The dir fsync that makes the delete durable covers the new name too.
    const ops = disk.only('open', 'truncate', 'rm', 'fsynced').filter((l) => l !== 'open journal');
    expect(ops).toEqual(['open journal/000000000002.log', 'open journal/000000000003.log', 'rm journal/000000000002.log', 'fsynced journal']);
    await j.append(rec(3));
    expect([await segments(), (await readJournal(dir)).records]).toEqual([['000000000003.log'], [rec(3)]]);
    await j.close();
    expect(await segments()).toEqual([]);
  });

  it('a new segment makes the journal dir only when it is missing, and again after an operator removed it', async () => {
    const mkdirs: string[] = [];
    const counting: SpoolFs = { ...nodeSpoolFs, mkdir: (p, o) => (mkdirs.push(String(p)), nodeSpoolFs.mkdir(p, o)) };
    const j = new CreateJournal({ dir, fs: counting });
    await j.open();
    await j.append(rec(1));
    expect(mkdirs).toEqual([dir]);
    await j.checkpoint();
    await j.append(rec(2));
    expect(mkdirs).toEqual([dir]);
    await j.checkpoint();
    await fs.rm(dir, { recursive: true });
    await j.append(rec(3));
    expect(mkdirs).toEqual([dir, dir]);
    expect((await readJournal(dir)).records).toEqual([rec(3)]);
    await j.close();
    expect(await segments()).toEqual([]);
  });
});
