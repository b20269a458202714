// Durable primitives on real files: coalesced directory fsyncs, atomic replaces, durable mkdir -p and rename.
import { renameSync, writeFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirSync, fsyncPath, mkdirDurable, overwriteFile, renameDurable, writeFileDurable, writeNewFileSynced } from '../../src/spool/durable.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { ls } from '../helpers/temp-spool.js';

let base: string;
beforeEach(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-durable-'));
});
afterEach(() => fs.rm(base, { recursive: true, force: true }));

/** Resolves with the time (performance.now) at which `p` settled. */
function settledAt(p: Promise<unknown>): Promise<number> {
  return p.then(
    () => performance.now(),
    () => performance.now(),
  );
}

describe('DirSync', () => {
  it('every one of many concurrent callers on one dir resolves', async () => {
    const ds = new DirSync();
    const results = await Promise.allSettled(Array.from({ length: 500 }, () => ds.sync(base)));
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
  });

  it('callers arriving during a sync share the next one, which starts after the running one ends', async () => {
    const ds = new DirSync();
    const first = ds.sync(base);
    // Renamed after the first sync was asked for: the first fsync may not cover it. (Sync calls, so
    // no event-loop turn passes and the first fsync is certainly still running.)
    writeFileSync(path.join(base, 'a'), '');
    renameSync(path.join(base, 'a'), path.join(base, 'b'));
    const later = Array.from({ length: 20 }, () => ds.sync(base));
    // Not the running promise: a caller must never be answered by an fsync that began before it asked.
    for (const p of later) expect(p).not.toBe(first);
    // All of them share one follow-up fsync.
    for (const p of later) expect(p).toBe(later[0]);
    const [tFirst, tLater] = await Promise.all([settledAt(first), settledAt(later[0])]);
    expect(tLater).toBeGreaterThanOrEqual(tFirst);
    await Promise.all(later);
    // Once idle, a new caller starts a fresh fsync.
    const fresh = ds.sync(base);
    expect(fresh).not.toBe(first);
    expect(fresh).not.toBe(later[0]);
    await fresh;
  });

  it('a caller after the follow-up started waits for a third fsync, in order', async () => {
    const ds = new DirSync();
    const order: string[] = [];
    const a = ds.sync(base).then(() => order.push('a'));
    const b = ds.sync(base);
    const bDone = b.then(() => order.push('b'));
    // Wait until a has finished and b has been started, then ask again.
    await a;
    await new Promise((r) => setImmediate(r));
    const c = ds.sync(base);
    expect(c).not.toBe(b);
    await Promise.all([bDone, c.then(() => order.push('c'))]);
    expect(order).toEqual(['a', 'b', 'c']);
  });

  it('different directories are synced independently', async () => {
    const ds = new DirSync();
    const dirs = await Promise.all(['x', 'y', 'z'].map(async (d) => (await fs.mkdir(path.join(base, d)), path.join(base, d))));
    const ps = dirs.map((d) => ds.sync(d));
    expect(new Set(ps).size).toBe(3);
    await Promise.all(ps);
  });

  it('a failing fsync rejects its callers only, and the next sync works', async () => {
    const ds = new DirSync();
    const missing = path.join(base, 'missing');
    const failing = ds.sync(missing);
    const queued = ds.sync(missing);
    await expect(failing).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(queued).rejects.toMatchObject({ code: 'ENOENT' });
    await fs.mkdir(missing);
    await expect(ds.sync(missing)).resolves.toBeUndefined();
  });
});

describe('fsyncPath', () => {
  it('syncs files and directories, and rejects for missing paths', async () => {
    await fs.writeFile(path.join(base, 'f'), 'x');
    await fsyncPath(path.join(base, 'f'));
    await fsyncPath(base);
    await expect(fsyncPath(path.join(base, 'nope'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('writeNewFileSynced', () => {
  it('creates a new file and refuses to overwrite one', async () => {
    const f = path.join(base, 'new');
    await writeNewFileSynced(f, 'data');
    expect(await fs.readFile(f, 'utf8')).toBe('data');
    await expect(writeNewFileSynced(f, 'other')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await fs.readFile(f, 'utf8')).toBe('data');
  });
});

describe('writeFileDurable / overwriteFile', () => {
  it('overwriteFile reuses the inode, creates a missing file, and fsyncs when asked', async () => {
    const rec = recordingFs(base);
    const f = path.join(base, 'status');
    await overwriteFile(f, 'a much longer first text', undefined, rec.fs);
    expect(rec.only('fsync')).toEqual([]);
    const ino = (await fs.stat(f)).ino;
    await overwriteFile(f, 'short', new DirSync(rec.fs));
    expect(rec.only('fsync', 'fsynced')).toEqual(['fsync status', 'fsynced status']);
    expect(await fs.readFile(f, 'utf8')).toBe('short');
    expect((await fs.stat(f)).ino).toBe(ino);
    expect(await ls(base)).toEqual(['status']);
  });

  it.each([['writeFileDurable', (f: string, d: string) => writeFileDurable(f, d, new DirSync())]])(
    '%s replaces the file atomically and leaves no .tmp',
    async (_name, write) => {
      const f = path.join(base, 'msg');
      await write(f, 'first');
      expect(await fs.readFile(f, 'utf8')).toBe('first');
      // A replace is a new inode renamed over the old (both exist at that moment, so they differ).
      const inoBefore = (await fs.stat(f)).ino;
      await write(f, 'second');
      expect((await fs.stat(f)).ino).not.toBe(inoBefore);
      // Readers racing the replaces only ever see a whole old or a whole new content.
      const contents = Array.from({ length: 40 }, (_, i) => `version ${i} `.repeat(2000));
      const seen = new Set<string>();
      let writing = true;
      const reader = (async () => {
        while (writing) seen.add(await fs.readFile(f, 'utf8'));
      })();
      for (const c of contents) await write(f, c);
      writing = false;
      await reader;
      for (const s of seen) expect(s === 'second' || contents.includes(s), `torn read of ${s.length} chars`).toBe(true);
      expect(await fs.readFile(f, 'utf8')).toBe(contents.at(-1));
      expect(await ls(base)).toEqual(['msg']);
    },
  );

  it('writeFileDurable replaces a stale temp left by a crash', async () => {
    const f = path.join(base, 'status');
    await fs.writeFile(`${f}.tmp`, 'stale half write');
    await writeFileDurable(f, '{"job_status":"ok"}', new DirSync());
    expect(await fs.readFile(f, 'utf8')).toBe('{"job_status":"ok"}');
    expect(await ls(base)).toEqual(['status']);
  });

  it('writes bytes as given', async () => {
    const f = path.join(base, 'bin');
    const data = Uint8Array.from([0, 1, 2, 255]);
    await writeFileDurable(f, data, new DirSync());
    expect(new Uint8Array(await fs.readFile(f))).toEqual(data);
  });
});

describe('mkdirDurable', () => {
  it('creates every missing level and is a no-op when the dir exists', async () => {
    const ds = new DirSync();
    const deep = path.join(base, 'done', '20261121', '16', '43');
    await mkdirDurable(deep, ds);
    expect((await fs.stat(deep)).isDirectory()).toBe(true);
    await mkdirDurable(deep, ds);
    const sibling = path.join(base, 'done', '20261121', '17', '00');
    await mkdirDurable(sibling, ds);
    expect(await ls(path.join(base, 'done', '20261121'))).toEqual(['16', '17']);
  });

  it('concurrent calls for one path all resolve with the dir present', async () => {
    const ds = new DirSync();
    const deep = path.join(base, 'a', 'b', 'c');
    await Promise.all(Array.from({ length: 20 }, () => mkdirDurable(deep, ds)));
    expect((await fs.stat(deep)).isDirectory()).toBe(true);
  });

  it('fails when a level is a file', async () => {
    await fs.writeFile(path.join(base, 'file'), '');
    await expect(mkdirDurable(path.join(base, 'file', 'x'), new DirSync())).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});

describe('renameDurable', () => {
  it('moves a directory across parents and within one', async () => {
    const ds = new DirSync();
    await fs.mkdir(path.join(base, 'from', 'm'), { recursive: true });
    await fs.mkdir(path.join(base, 'to'));
    await fs.writeFile(path.join(base, 'from', 'm', 'msg'), 'x');
    await renameDurable(path.join(base, 'from', 'm'), path.join(base, 'to', 'm'), ds);
    expect(await ls(path.join(base, 'from'))).toEqual([]);
    expect(await fs.readFile(path.join(base, 'to', 'm', 'msg'), 'utf8')).toBe('x');
    await renameDurable(path.join(base, 'to', 'm'), path.join(base, 'to', '.m'), ds);
    expect(await ls(path.join(base, 'to'))).toEqual(['.m']);
    await expect(renameDurable(path.join(base, 'nope'), path.join(base, 'to', 'x'), ds)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
