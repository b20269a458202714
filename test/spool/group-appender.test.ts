// GroupAppender on a real file: a record the disk refused is cut away before any record follows it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupAppender } from '../../src/spool/group-appender.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { callByCallFs } from '../helpers/call-by-call-fs.js';
import { openFilesUnder } from '../helpers/open-files.js';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-appender-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/**
 * A disk that `fill(room)` leaves `room` bytes on: a write gets as far as that (a short count, as
 * write(2) gives), the next one fails with ENOSPC; `free()` gives the space back.
 */
function fakeDisk(): { fs: SpoolFs; fill: (bytes: number) => void; free: () => void } {
  let full = false;
  let room = 0;
  const open: SpoolFs['open'] = async (...args) => {
    const handle = await nodeSpoolFs.open(...args);
    const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<{ bytesWritten: number }>;
    (handle as unknown as { write: unknown }).write = async (data: string | Uint8Array, ...rest: unknown[]) => {
      if (!full) return write(data, ...rest);
      const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      const offset = typeof rest[0] === 'number' ? rest[0] : 0;
      const length = typeof rest[1] === 'number' ? rest[1] : bytes.length - offset;
      if (room === 0) throw enospc();
      const n = Math.min(room, length);
      room -= n;
      return write(bytes, offset, n);
    };
    return handle;
  };
  return {
    fs: { ...callByCallFs, open },
    fill: (bytes) => {
      full = true;
      room = bytes;
    },
    free: () => (full = false),
  };
}

describe('GroupAppender', () => {
  /** a, then b cut short by a full disk (refused), then c once space is back: the file's text. */
  async function tornMiddle(): Promise<string> {
    const file = path.join(dir, 'journal');
    const disk = fakeDisk();
    const j = new GroupAppender(file, disk.fs);
    await j.append('{"a":1}\n');
    disk.fill(5);
    await expect(j.append('{"b":2222}\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    disk.free();
    await j.append('{"c":3}\n');
    await j.close();
    return fs.readFile(file, 'utf8');
  }

  it('a record the disk cut short is refused and cut away; the next record after space is freed follows the last good one', async () => {
    expect(await tornMiddle()).toBe('{"a":1}\n{"c":3}\n');
  });

  it('while the cut of a refused record fails, each next record is refused unwritten; once it is cut, the next follows the last good one', async () => {
    const file = path.join(dir, 'journal');
    const disk = fakeDisk();
    let refusals = 2;
    const truncateFailing: SpoolFs = {
      ...disk.fs,
      open: async (...args) => {
        const h = await disk.fs.open(...args);
        const truncate = h.truncate.bind(h);
        return Object.assign(h, { truncate: (len: number) => (refusals-- > 0 ? Promise.reject(enospc()) : truncate(len)) });
      },
    };
    const j = new GroupAppender(file, truncateFailing);
    await j.append('{"a":1}\n');
    disk.fill(5);
    await expect(j.append('{"b":2222}\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    disk.free();
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"b":');
    await expect(j.append('{"c":3}\n')).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"b":');
    await j.append('{"d":4}\n');
    await j.close();
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"d":4}\n');
  });

  it('appends made in one turn of the event loop share one fdatasync; one made after a batch started waits for the next', async () => {
    const file = path.join(dir, 'journal');
    let syncs = 0;
    const counting: SpoolFs = {
      ...callByCallFs,
      open: async (...args) => {
        const h = await nodeSpoolFs.open(...args);
        const datasync = h.datasync.bind(h);
        return Object.assign(h, { datasync: () => (syncs++, datasync()) });
      },
    };
    const j = new GroupAppender(file, counting);
    // As four clients' requests read in one turn: one batch.
    await Promise.all(['a', 'b', 'c', 'd'].map((k) => j.append(`{"${k}":1}\n`)));
    expect(syncs).toBe(1);
    const first = j.append('{"e":1}\n');
    await new Promise((r) => setImmediate(r));
    await Promise.all([first, j.append('{"f":1}\n')]);
    expect(syncs).toBe(3);
    await j.close();
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"b":1}\n{"c":1}\n{"d":1}\n{"e":1}\n{"f":1}\n');
  });

  it('close() in the turn of an append: the record is in the file and its caller answered before close resolves; no descriptor left', async () => {
    const file = path.join(dir, 'journal');
    const j = new GroupAppender(file);
    let answered = false;
    const appended = j.append('{"a":1}\n').then(() => (answered = true));
    await j.close();
    expect(answered).toBe(true);
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n');
    await appended;
    expect(openFilesUnder(dir)).toEqual([]);
  });

  it('a compaction whose old descriptor fails to close (EIO) still rewrites the file, and later appends are answered', async () => {
    const file = path.join(dir, 'journal');
    const failingClose: SpoolFs = {
      ...callByCallFs,
      open: async (...args) => {
        const h = await nodeSpoolFs.open(...args);
        const close = h.close.bind(h);
        return Object.assign(h, { close: () => close().then(() => Promise.reject(Object.assign(new Error('EIO: i/o error, close'), { code: 'EIO' }))) });
      },
    };
    const j = new GroupAppender(file, failingClose);
    await j.append('{"a":1}\n');
    await j.compact(() => fs.writeFile(file, '{"b":2}\n'));
    await j.append('{"c":3}\n');
    expect(await fs.readFile(file, 'utf8')).toBe('{"b":2}\n{"c":3}\n');
    await j.close().catch(() => undefined);
  });

  it('a batch written whole whose fdatasync fails (ENOSPC at writeback) is refused and cut away: no line of it counts later', async () => {
    const file = path.join(dir, 'journal');
    let failSync = false;
    const fsFailingSync: SpoolFs = {
      ...callByCallFs,
      open: async (...args) => {
        const h = await nodeSpoolFs.open(...args);
        const datasync = h.datasync.bind(h);
        return Object.assign(h, { datasync: () => (failSync ? ((failSync = false), Promise.reject(enospc())) : datasync()) });
      },
    };
    const j = new GroupAppender(file, fsFailingSync);
    await j.append('{"a":1}\n');
    failSync = true;
    // b goes alone (its batch starts at the end of this turn of the event loop); c, appended after, waits for the next batch, which succeeds.
    const bDone = j.append('{"b":2}\n');
    await new Promise((r) => setImmediate(r));
    const [b, c] = await Promise.allSettled([bDone, j.append('{"c":3}\n')]);
    expect(b).toMatchObject({ status: 'rejected', reason: { code: 'ENOSPC' } });
    expect(c.status).toBe('fulfilled');
    await j.close();
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"c":3}\n');
  });

  it("a compaction asked for while close() waits for the file's sync thread closes no descriptor before that thread has ended", async () => {
    const order: string[] = [];
    const watched: SpoolFs = {
      ...nodeSpoolFs,
      open: async (...args) => {
        const h = await nodeSpoolFs.open(...args);
        return Object.assign(Object.create(h) as typeof h, { close: () => (order.push('handle closed'), h.close()) });
      },
      journalSync: (...args) => {
        const thread = nodeSpoolFs.journalSync!(...args);
        return { append: (t) => thread.append(t), kick: () => thread.kick(), close: () => thread.close().then(() => void order.push('thread ended')) };
      },
    };
    const file = path.join(dir, 'journal');
    const j = new GroupAppender(file, watched);
    await j.append('{"a":1}\n');
    const b = j.append('{"b":2}\n');
    await new Promise((r) => setImmediate(r));
    const closed = j.close();
    const compacted = j.compact(async () => void order.push('rewrite'));
    await Promise.all([b, closed, compacted]);
    expect(order).toEqual(['thread ended', 'handle closed', 'rewrite']);
    expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"b":2}\n');
  });

  it("on a real full disk, through the addon (the file's sync thread): the refused batch is cut away, the next follows the last good one", async () => {
    expect(typeof nodeSpoolFs.journalSync, 'the addon is built').toBe('function');
    const mnt = path.join(dir, 'mnt');
    await fs.mkdir(mnt);
    const unmount = await mountTmpfs(mnt, '256k', 'rq-appender');
    try {
      const file = path.join(mnt, 'journal');
      const j = new GroupAppender(file);
      await j.append('{"a":1}\n');
      fillDisk(path.join(mnt, 'filler'));
      // More than the page the journal already has: the write must reach for a page there is none of.
      const big = `{"b":"${'x'.repeat(8192)}"}\n`;
      await expect(j.append(big)).rejects.toMatchObject({ code: 'ENOSPC', syscall: 'write', path: file });
      await fs.rm(path.join(mnt, 'filler'));
      await j.append('{"c":3}\n');
      await j.close();
      expect(await fs.readFile(file, 'utf8')).toBe('{"a":1}\n{"c":3}\n');
    } finally {
      await unmount();
    }
  });
});
