// The segment a CreateJournal checkpoint keeps for the next records: the last one emptied, or a new one made ahead; checked before use, deleted at a stop.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CreateJournal, readJournal } from '../../src/spool/create-journal.js';
import { fsyncPath } from '../../src/spool/durable.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { eio, journalDirPerTest, rec, segmentsIn } from './create-journal-harness.js';

let dir = '';
journalDirPerTest((d) => (dir = d));
const segments = () => segmentsIn(dir);

describe('the spare segment', () => {
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
          stat: () => (badStat ? eio('fstat') : h.stat()),
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

  it('a checkpoint whose deletes are not made durable keeps its emptied segment sealed and unused, for the next one to delete', async () => {
    const fail = { syncfs: true, dirSync: false };
    const failing: SpoolFs = {
      ...nodeSpoolFs,
      syncfs: (p) => (fail.syncfs ? ((fail.syncfs = false), eio('syncfs')) : nodeSpoolFs.syncfs(p)),
      fsyncPath: (p) => (fail.dirSync ? eio('fsync') : fsyncPath(p, nodeSpoolFs)),
    };
    const j = new CreateJournal({ dir, fs: failing });
    await j.open();
    await j.append(rec(1));
    await expect(j.checkpoint()).rejects.toThrow('syncfs');
    await j.append(rec(2));
    fail.dirSync = true;
    // Segment 2 is emptied for the next records, segment 1 deleted, and that delete not made durable.
    await expect(j.checkpoint()).rejects.toThrow('fsync');
    expect([await segments(), (await readJournal(dir)).records]).toEqual([['000000000002.log'], []]);
    fail.dirSync = false;
    await j.append(rec(3));
    expect(await segments()).toEqual(['000000000002.log', '000000000003.log']);
    await j.checkpoint();
    expect([await segments(), (await readJournal(dir)).records]).toEqual([['000000000003.log'], []]);
    await j.close();
  });

  it('a checkpoint keeps no segment whose name was not made durable, nor one it cannot empty: a new one is made ahead, its name durable', async () => {
    const disk = recordingFs(path.dirname(dir));
    const fail = { dirSync: false, truncate: false };
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
});
