// Blank message directories: made ahead in the background, taken by creates, cleaned by recovery.
import fs from 'node:fs/promises';
import { closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openFilesUnder } from '../helpers/open-files.js';
import { waitFor } from '../helpers/rq-root.js';
import { HOST, type TempSpool, ls, tempSpool, walk } from '../helpers/temp-spool.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { type Blank, BlankDirs } from '../../src/spool/blanks.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { recoverSpool } from '../../src/spool/recovery.js';

/** The real fs, counting the blanks the pool has got: a blank's dir is listed before its refill has ended and the pool holds it. */
function countingBlanks(): { made: number; fs: typeof nodeSpoolFs } {
  const c = {
    made: 0,
    fs: {
      ...nodeSpoolFs,
      makeBlanks: async (...a: Parameters<NonNullable<typeof nodeSpoolFs.makeBlanks>>) => {
        const made = await nodeSpoolFs.makeBlanks!(...a);
        c.made += made.length;
        return made;
      },
    },
  };
  return c;
}

/** A taken blank's dir, its msg descriptor (if the addon made it) closed. */
function dirOf(b: Blank | undefined): string | null {
  if (b?.made) closeSync(b.made.fd);
  return b?.dir ?? null;
}

describe('blanks', () => {
  let t: TempSpool;
  afterEach(async () => {
    await t.spool.close();
    await t.cleanup();
  });

  const blankDir = () => path.join(t.spool.paths.dir, '.blank');
  const inode = async (p: string) => (await fs.stat(p)).ino;

  it('a create takes a ready blank: its id carries the blank inode and job/ exists before any dispatch', async () => {
    const counting = countingBlanks();
    t = await tempSpool('test', { blanks: 3, fs: counting.fs });
    await t.spool.create({ dest: 'test' }, { commit: true });
    await waitFor(async () => counting.made === 3, 'three blanks in the pool', 5000, 5);
    const ready = new Set(await Promise.all((await ls(blankDir())).map((n) => inode(path.join(blankDir(), n)))));

    const msg = await t.spool.create({ dest: 'test', param1: 'x' }, { commit: true });
    const dir = t.spool.msgDir('que', msg.msg_id);
    expect(ready.has(await inode(dir))).toBe(true);
    expect(Number(msg.msg_id.split('.').pop())).toBe(await inode(dir));
    expect((await walk(dir)).sort()).toEqual(['history', 'job', path.join('job', 'stdio.log'), 'msg', 'pid']);
    expect(JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'))).toMatchObject({ msg_id: msg.msg_id, param1: 'x' });
    expect(await t.spool.readHistory('que', msg.msg_id)).toMatchObject([{ from: null, to: 'que', actor: 'create' }]);
    // Taken blanks are replaced in the background once the pool is down to half, several in one go.
    expect(await ls(blankDir())).toHaveLength(2);
    await t.spool.create({ dest: 'test' }, { commit: true });
    await waitFor(async () => (await ls(blankDir())).length === 3, 'refilled', 5000, 5);
  });

  it('while no message made now would start soon, a blank is the dir and its msg only; staged blanks come back with the next refills', async () => {
    let soon = false;
    const counting = countingBlanks();
    t = await tempSpool('test', { blanks: 2, stageBlanks: () => soon, fs: counting.fs });
    await t.spool.create({ dest: 'test' }, { commit: true });
    await waitFor(async () => counting.made === 2, 'two blanks in the pool', 5000, 5);
    for (const b of await ls(blankDir())) expect(await walk(path.join(blankDir(), b))).toEqual(['msg']);
    const light = await t.spool.create({ dest: 'test', param1: 'later' }, { commit: true });
    expect(await walk(t.spool.msgDir('que', light.msg_id))).toEqual(['msg']);
    expect(JSON.parse(await fs.readFile(path.join(t.spool.msgDir('que', light.msg_id), 'msg'), 'utf8'))).toMatchObject({ param1: 'later' });

    const trees = async () => Promise.all((await ls(blankDir())).map(async (n) => (await walk(path.join(blankDir(), n))).sort().join(',')));
    const full = ['history', 'job', path.join('job', 'stdio.log'), 'msg', 'pid'].join(',');
    await waitFor(async () => ((w) => w.length === 2 && w.every((x) => x === 'msg'))(await trees()), 'two light blanks again', 5000, 5);
    soon = true;
    // The light blanks are taken first (oldest first); every refill from now on carries the run files again.
    for (let i = 0; i < 2; i++) await t.spool.create({ dest: 'test' }, { commit: true });
    // Listed as soon as its dir exists: refilled once both are whole.
    await waitFor(async () => ((w) => w.length === 2 && w.every((x) => x === full))(await trees()), 'two staged blanks', 5000, 5);
  });

  it('a burst larger than the pool still creates every message, each with a unique id', async () => {
    t = await tempSpool('test', { blanks: 2 });
    const msgs = await Promise.all(Array.from({ length: 40 }, (_, i) => t.spool.create({ dest: 'test', param1: String(i) }, { commit: i % 2 === 0 })));
    expect(new Set(msgs.map((m) => m.msg_id)).size).toBe(40);
    expect((await ls(t.spool.paths.state.que)).length + (await ls(t.spool.paths.state.prep)).length).toBe(40);
  });

  it('none are made unless asked for', async () => {
    t = await tempSpool('test');
    await t.spool.create({ dest: 'test' }, { commit: true });
    await t.spool.close();
    expect(await ls(blankDir())).toEqual([]);
  });

  it('recovery removes blanks left by a previous process', async () => {
    t = await tempSpool('test', { blanks: 2 });
    await t.spool.create({ dest: 'test' }, { commit: true });
    await waitFor(async () => (await ls(blankDir())).length === 2, 'two blanks', 5000, 5);
    await t.spool.close();
    // A restarted queue process: a second spool on the same root.
    const next = new QueueSpool(t.root, 'test', { host: HOST });
    await recoverSpool(next);
    expect(await ls(blankDir())).toEqual([]);
    expect(await ls(t.spool.paths.state.que)).toHaveLength(1);
  });
});

describe('BlankDirs on its own', () => {
  it('where descriptors are few (keepOpen false) the addon blanks come without their msg open: none is held', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blankdirs-'));
    const counting = countingBlanks();
    const pool = new BlankDirs(path.join(root, '.blank'), 2, counting.fs, () => true, false);
    try {
      expect(pool.take()).toBeUndefined();
      const blank = await waitFor(async () => pool.take() ?? null, 'a blank');
      expect(blank.made).toBeUndefined();
      expect((await fs.readdir(blank.dir)).sort()).toEqual(['history', 'job', 'msg', 'pid']);
      // Looked at once the refill that take started has ended: while it runs, the file it is making is open.
      await waitFor(async () => counting.made === 3, 'the refill after the take');
      expect(openFilesUnder(root)).toEqual([]);
    } finally {
      await pool.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('a take starts its top-up after the caller is done, not inside the take (a create starts its message first)', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blankdirs-'));
    const calls: string[] = [];
    const counting = {
      ...nodeSpoolFs,
      mkdir: (p: string, o: { recursive: boolean }) => (calls.push('mkdir'), nodeSpoolFs.mkdir(p, o)),
      makeBlanks: (dirs: string[], subdirs: string[], files: string[], keepOpen: boolean) => (
        calls.push('makeBlanks'),
        nodeSpoolFs.makeBlanks!(dirs, subdirs, files, keepOpen)
      ),
    };
    const pool = new BlankDirs(path.join(root, '.blank'), 2, counting);
    try {
      expect(pool.take()).toBeUndefined();
      expect(calls).toEqual([]);
      await waitFor(async () => calls.includes('makeBlanks'), 'the top-up');
      expect(calls).toEqual(['mkdir', 'makeBlanks']);
    } finally {
      await pool.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('starts empty, fills to exactly its size in the background, each blank whole and distinct', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blankdirs-'));
    const pool = new BlankDirs(path.join(root, '.blank'), 3, nodeSpoolFs);
    try {
      expect(pool.take()).toBeUndefined();
      await waitFor(async () => (await fs.readdir(path.join(root, '.blank')).catch(() => [])).length === 3, 'three blanks');
      // A dir is listed before its files are made: close() waits for the refill under way, and a closed pool still hands out what it has.
      await pool.close();
      const taken = [pool.take(), pool.take(), pool.take()].map((b) => {
        // Closed with the pool: a create opens the msg itself.
        expect(b?.made).toBeUndefined();
        return b?.dir;
      });
      expect(new Set(taken).size).toBe(3);
      for (const dir of taken) {
        expect(dir, 'a blank').toBeDefined();
        for (const f of ['msg', 'history', 'pid', 'job/stdio.log']) expect((await fs.stat(path.join(dir!, f))).size, f).toBe(0);
      }
      expect(pool.take()).toBeUndefined();
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('a take while a refill is failing gets a refill of its own once that one stops', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blankdirs-'));
    const blanks = path.join(root, '.blank');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reachedSecond!: () => void;
    const atSecond = new Promise<void>((resolve) => (reachedSecond = resolve));
    // The second blank fails, but only after the test has taken the first one while that refill is still under way.
    const failing = {
      ...nodeSpoolFs,
      makeBlanks: undefined,
      mkdir: async (p: string, o: { recursive: boolean }) => {
        if (p.includes(`${process.pid}.1`)) {
          reachedSecond();
          await gate;
          throw Object.assign(new Error('no space'), { code: 'ENOSPC' });
        }
        return nodeSpoolFs.mkdir(p, o);
      },
    };
    const pool = new BlankDirs(blanks, 2, failing);
    try {
      expect(pool.take()).toBeUndefined();
      await atSecond;
      expect(path.basename(dirOf(pool.take()) ?? '')).toBe(`${process.pid}.0`);
      release();
      // Watched from outside: a take would itself start a refill.
      const third = path.join(blanks, `${process.pid}.2`);
      await waitFor(async () => (await fs.readdir(third).catch(() => [])).length === 4, 'a blank from the refill after the failed one');
      await pool.close();
      expect(pool.take()?.dir).toBe(third);
    } finally {
      await pool.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it.each([
    ['in batches through the addon', nodeSpoolFs],
    ['call by call without it', { ...nodeSpoolFs, makeBlanks: undefined }],
  ])('%s: a blank that cannot be made stops the refill with the ones before it kept; the next take refills', async (_, spoolFs) => {
    expect(typeof nodeSpoolFs.makeBlanks, 'the addon is built').toBe('function');
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blankdirs-'));
    const blanks = path.join(root, '.blank');
    const pool = new BlankDirs(blanks, 3, spoolFs);
    try {
      // The second name the pool will use is taken by a file: making that blank fails (EEXIST).
      await fs.mkdir(blanks);
      await fs.writeFile(path.join(blanks, `${process.pid}.1`), 'squatter');
      expect(pool.take()).toBeUndefined();
      const first = await waitFor(async () => dirOf(pool.take()), 'the one blank made');
      expect(path.basename(first)).toBe(`${process.pid}.0`);
      expect((await fs.readdir(first)).sort()).toEqual(['history', 'job', 'msg', 'pid']);
      // Takes go on refilling, with names after the failed one: three more whole blanks, all different.
      const taken: string[] = [];
      while (taken.length < 3) taken.push(await waitFor(async () => dirOf(pool.take()), 'a new blank'));
      await pool.close();
      for (const dir of taken) {
        expect(Number(path.basename(dir).split('.')[1]), dir).toBeGreaterThan(1);
        expect((await fs.stat(path.join(dir, 'msg'))).size).toBe(0);
      }
      expect(new Set(taken).size).toBe(3);
      expect(await fs.readFile(path.join(blanks, `${process.pid}.1`), 'utf8')).toBe('squatter');
    } finally {
      await pool.close();
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});
