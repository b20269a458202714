// overwriteFile on a full disk: a write refused for space leaves the old text whole, never an empty or half-written file; injected, and on a real full tmpfs both call by call and through the addon.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { overwriteFile } from '../../src/spool/durable.js';
import { type SpoolFile, type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { callByCallFs } from '../helpers/call-by-call-fs.js';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';
import { noSpace, noSpaceFs } from '../helpers/no-space-fs.js';

const OLD = '{"job_status":"half way"}';
const LONGER = '{"job_status":"done - wrote, and more besides"}';
const SHORTER = '{"job_status":"x"}';

/** A disk with `room` bytes left: each write takes what is left of them, short, and then is refused. */
function fillingFs(room: number): SpoolFs {
  let left = room;
  const file = (fh: SpoolFile): SpoolFile => ({
    ...fh,
    writeFile: (d) => fh.writeFile(d),
    truncate: (len) => fh.truncate(len),
    sync: () => fh.sync(),
    datasync: () => fh.datasync(),
    stat: () => fh.stat(),
    close: () => fh.close(),
    write: (async (data: string | Uint8Array, a: number, b?: number, c?: number) => {
      const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data.subarray(a, a + b!));
      const position = typeof data === 'string' ? a : c;
      if (left === 0) throw noSpace();
      const n = Math.min(left, bytes.length);
      left -= n;
      const r = await fh.write(bytes, 0, n, position);
      return typeof data === 'string' ? { bytesWritten: r.bytesWritten, buffer: data } : r;
    }) as SpoolFile['write'],
  });
  return { ...callByCallFs, open: async (p, flags, mode) => file(await nodeSpoolFs.open(p, flags, mode)) };
}

describe('overwriteFile when the disk refuses (injected ENOSPC)', () => {
  let base = '';
  let file = '';
  beforeEach(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-overwrite-full-'));
    file = path.join(base, 'status');
    await fs.writeFile(file, OLD);
  });
  afterEach(() => fs.rm(base, { recursive: true, force: true }));

  it.each([
    ['a longer text', LONGER],
    ['a shorter text', SHORTER],
  ])('%s, every write refused: the call fails and the old text stays', async (_what, text) => {
    await expect(
      overwriteFile(
        file,
        text,
        undefined,
        noSpaceFs(() => true),
      ),
    ).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(file, 'utf8')).toBe(OLD);
  });

  it('a longer text whose write the disk cuts short midway: the call fails and the old text stays', async () => {
    await expect(overwriteFile(file, LONGER, undefined, fillingFs(5))).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await fs.readFile(file, 'utf8')).toBe(OLD);
  });

  it('with room enough, the text is written whole, longer or shorter', async () => {
    await overwriteFile(file, LONGER, undefined, fillingFs(LONGER.length));
    expect(await fs.readFile(file, 'utf8')).toBe(LONGER);
    await overwriteFile(file, SHORTER, undefined, fillingFs(SHORTER.length));
    expect(await fs.readFile(file, 'utf8')).toBe(SHORTER);
  });
});

describe('overwriteFile on a full tmpfs', () => {
  let dir = '';
  let unmount: (() => Promise<void>) | undefined;
  let mountError = '';
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-overwrite-tmpfs-'));
    try {
      unmount = await mountTmpfs(dir, '256k', 'rq-overwrite-full');
    } catch (err) {
      mountError = (err as Error).message.trim();
    }
  });
  afterAll(async () => {
    await unmount?.();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const ways: Array<[string, SpoolFs]> = [
    ['call by call', callByCallFs],
    ['through the addon', nodeSpoolFs],
  ];
  for (const [way, sfs] of ways)
    it(`${way}: a text that needs a page more is refused and the old one stays; one that fits the pages the file has is written`, async (ctx) => {
      if (!unmount) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
      if (way === 'through the addon' && !sfs.overwrite) return ctx.skip('the rq_fileops addon is not built');
      const file = path.join(dir, `status-${way.replace(/ /g, '-')}`);
      const filler = path.join(dir, 'filler');
      await fs.writeFile(file, OLD);
      fillDisk(filler);
      try {
        const big = JSON.stringify({ job_status: 'x'.repeat(6000) });
        await expect(overwriteFile(file, big, undefined, sfs)).rejects.toMatchObject({ code: 'ENOSPC' });
        expect(await fs.readFile(file, 'utf8')).toBe(OLD);
        await overwriteFile(file, LONGER, undefined, sfs);
        expect(await fs.readFile(file, 'utf8')).toBe(LONGER);
        await overwriteFile(file, SHORTER, undefined, sfs);
        expect(await fs.readFile(file, 'utf8')).toBe(SHORTER);
      } finally {
        await fs.rm(filler, { force: true });
      }
    });
});
