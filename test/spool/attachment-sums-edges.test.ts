// Kept and lazy attachment sums at their edges: the record's size bound and md5 form, md5 read in bounded chunks, a file changed while summed, the cache's bound.
import { createHash } from 'node:crypto';
import { readdirSync, utimesSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LazySums, keptSum, md5Handle, sumName, sumRecord, writeSum } from '../../src/spool/attachment-sums.js';
import { SafeDir } from '../../src/spool/beneath.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
const openFds = () => readdirSync('/proc/self/fd').length;
const MiB = 1024 * 1024;

let attach: string;
let dir: SafeDir;

beforeEach(async () => {
  attach = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-sums-'));
  dir = await SafeDir.open(attach);
});
afterEach(async () => {
  await dir.close();
  await fs.rm(attach, { recursive: true, force: true });
});

async function file(name: string, data: Buffer | string) {
  await fs.writeFile(path.join(attach, name), data);
  return fs.lstat(path.join(attach, name), { bigint: true });
}

describe('kept sums', () => {
  it('writeSum keeps a record keptSum takes, and leaves no handle open', async () => {
    const st = await file('a.bin', 'bytes');
    const before = openFds();
    await writeSum(attach, 'a.bin', md5('bytes'), st, nodeSpoolFs);
    expect(await keptSum(dir, 'a.bin', st)).toBe(md5('bytes'));
    expect(await keptSum(dir, 'none.bin', st)).toBeNull();
    expect(openFds()).toBe(before);
    expect(await fs.readdir(attach)).toEqual(['.a.bin.md5', 'a.bin']);
  });

  it('a record of 512 bytes is read; one of 513 is not, though its first 512 bytes would parse', async () => {
    const st = await file('a.bin', 'bytes');
    const rec = sumRecord('f'.repeat(32), st);
    await fs.writeFile(path.join(attach, sumName('a.bin')), rec.padEnd(512, ' '));
    expect(await keptSum(dir, 'a.bin', st)).toBe('f'.repeat(32));
    await fs.writeFile(path.join(attach, sumName('a.bin')), rec.padEnd(513, ' '));
    expect(await keptSum(dir, 'a.bin', st)).toBeNull();
  });

  it('the md5 must be 32 hex digits and nothing else', async () => {
    const st = await file('a.bin', 'bytes');
    for (const bad of [`x${'a'.repeat(32)}`, `${'a'.repeat(32)}x`, 'A'.repeat(32), 'a'.repeat(31)]) {
      await fs.writeFile(path.join(attach, sumName('a.bin')), sumRecord(bad, st));
      expect(await keptSum(dir, 'a.bin', st)).toBeNull();
    }
  });
});

describe('md5Handle', () => {
  /** A real handle whose reads are recorded (the length each asked for). */
  async function recorded(name: string) {
    const fh = await fs.open(path.join(attach, name), 'r');
    const asked: number[] = [];
    const read = fh.read.bind(fh) as (b: Buffer, o: number, l: number, p: number) => Promise<{ bytesRead: number }>;
    const handle = { read: (b: Buffer, o: number, l: number, p: number) => (asked.push(l), read(b, o, l, p)) } as unknown as fs.FileHandle;
    return { fh, handle, asked };
  }

  it('reads in chunks of at most 1 MiB and no further than the end', async () => {
    const data = Buffer.alloc(2.5 * MiB, 7);
    await file('big.bin', data);
    const { fh, handle, asked } = await recorded('big.bin');
    try {
      expect(await md5Handle(handle, data.length)).toBe(md5(data));
      expect(asked).toEqual([MiB, MiB, MiB / 2]);
    } finally {
      await fh.close();
    }
  });

  it('sums only the first `size` bytes of a file that grew, and what there is of one that shrank', async () => {
    const data = Buffer.alloc(3 * MiB);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    await file('grown.bin', data);
    await file('short.bin', 'short');
    const grown = await fs.open(path.join(attach, 'grown.bin'), 'r');
    const short = await fs.open(path.join(attach, 'short.bin'), 'r');
    try {
      expect(await md5Handle(grown, 1.5 * MiB)).toBe(md5(data.subarray(0, 1.5 * MiB)));
      expect(await md5Handle(short, 10)).toBe(md5('short'));
    } finally {
      await grown.close();
      await short.close();
    }
  });
});

describe('LazySums', () => {
  /** `dir` with its opens counted, and `afterOpen` run on each opened file before the sum reads it. */
  function counting(afterOpen: (name: string) => void = () => undefined) {
    const seen = { opens: 0 };
    const d = {
      openFile: async (name: string) => {
        seen.opens++;
        const r = await dir.openFile(name);
        afterOpen(name);
        return r;
      },
    } as unknown as SafeDir;
    return { d, seen };
  }

  it('sums files up to 16 MiB by default, none above', async () => {
    const lazy = new LazySums();
    const kib = await file('kib.bin', 'k'.repeat(1024));
    expect(await lazy.of(dir, 'kib.bin', kib)).toBe(md5('k'.repeat(1024)));
    const atBound = path.join(attach, 'at.bin');
    await fs.writeFile(atBound, '');
    await fs.truncate(atBound, 16 * MiB);
    expect(await lazy.of(dir, 'at.bin', await fs.lstat(atBound, { bigint: true }))).toBe(md5(Buffer.alloc(16 * MiB)));
    await fs.truncate(atBound, 16 * MiB + 1);
    expect(await lazy.of(dir, 'at.bin', await fs.lstat(atBound, { bigint: true }))).toBeNull();
  });

  it('a file changed since the listing looked, or while it is summed, has no sum, and none is remembered', async () => {
    const lazy = new LazySums();
    const stale = await file('a.bin', 'first');
    await fs.writeFile(path.join(attach, 'a.bin'), 'other');
    const later = new Date(Date.now() + 5000);
    await fs.utimes(path.join(attach, 'a.bin'), later, later);
    expect(await lazy.of(dir, 'a.bin', stale)).toBeNull();
    const now = await fs.lstat(path.join(attach, 'a.bin'), { bigint: true });
    const touching = counting((name) => {
      const t = new Date(Date.now() + 9000);
      utimesSync(path.join(attach, name), t, t);
    });
    const before = openFds();
    expect(await lazy.of(touching.d, 'a.bin', now)).toBeNull();
    expect(openFds()).toBe(before);
    // Nothing was remembered under the key the listing gave: a look with it opens the file again.
    const plain = counting();
    expect(await lazy.of(plain.d, 'a.bin', now)).toBeNull();
    expect(plain.seen.opens).toBe(1);
  });

  it('remembers up to maxEntries sums, forgetting the oldest first', async () => {
    const lazy = new LazySums(1024, 2);
    const st: Record<string, Awaited<ReturnType<typeof file>>> = {};
    for (const n of ['a', 'b', 'c']) st[n] = await file(n, n.repeat(3));
    const { d, seen } = counting();
    for (const n of ['a', 'b', 'c']) expect(await lazy.of(d, n, st[n])).toBe(md5(n.repeat(3)));
    expect(seen.opens).toBe(3);
    expect(await lazy.of(d, 'b', st.b)).toBe(md5('bbb'));
    expect(await lazy.of(d, 'c', st.c)).toBe(md5('ccc'));
    expect(seen.opens).toBe(3);
    expect(await lazy.of(d, 'a', st.a)).toBe(md5('aaa'));
    expect(seen.opens).toBe(4);
  });
});
