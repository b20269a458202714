// Attachments on real files: hard links, md5/size, the classic refusals, replace, delete, cross-filesystem copies.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attachFile, attachmentNames, linkAttachments, listAttachments as listWith, md5File } from '../../src/spool/attachments.js';
import { LazySums } from '../../src/spool/attachment-sums.js';
import { isRqError } from '../../src/errors.js';
import { DirSync } from '../../src/spool/durable.js';
import { type TempSpool, isRoot, ls, tempSpool } from '../helpers/temp-spool.js';
import { recoverSpool } from '../../src/spool/recovery.js';

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
const listAttachments = (dir: string) => listWith(dir, new LazySums());

let t: TempSpool;
let id: string;
let msgDir: string;
let files: string;

beforeEach(async () => {
  t = await tempSpool();
  id = (await t.spool.create({ dest: 'test' }, { commit: false })).msg_id;
  msgDir = t.spool.msgDir('prep', id);
  files = path.join(t.root, 'files');
  await fs.mkdir(files);
});
afterEach(() => t.cleanup());

async function source(name: string, data: Buffer | string): Promise<string> {
  const p = path.join(files, name);
  await fs.writeFile(p, data);
  return p;
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(isRqError(err, 'RQ_ERR_ATTACH_REFUSED')).toBe(true);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('attach', () => {
  it('a name too long for its sum file beside it (247 to 255 bytes) is stored without one: its md5 is computed when listed, and it deletes', async () => {
    const name = 'n'.repeat(250);
    const src = await source('long.txt', 'long');
    expect(await t.spool.attach(id, src, name)).toEqual({ name, md5: md5('long'), size: 4 });
    expect(await ls(path.join(msgDir, 'attach'))).toEqual([name]);
    expect(await t.spool.attachments('prep', id)).toEqual({ [name]: { md5: md5('long'), size: 4, path: path.join(msgDir, 'attach', name) } });
    expect(await t.spool.deleteAttachment(id, name)).toBeNull();
    expect(await ls(path.join(msgDir, 'attach'))).toEqual([]);
  });

  it.each([
    ['0 bytes', Buffer.alloc(0)],
    ['1 byte', Buffer.from('x')],
    ['3 MB random', randomBytes(3 * 1024 * 1024)],
  ])('hard-links the source and reports md5 and size (%s)', async (_label, data) => {
    const src = await source('data.bin', data);
    const r = await t.spool.attach(id, src, undefined);
    expect(r).toEqual({ name: 'data.bin', md5: md5(data), size: data.length });
    const stored = path.join(msgDir, 'attach', 'data.bin');
    expect((await fs.stat(stored)).ino).toBe((await fs.stat(src)).ino);
    expect(await md5File(stored)).toEqual({ md5: md5(data), size: data.length });
    expect(await t.spool.attachments('prep', id)).toEqual({ 'data.bin': { md5: md5(data), size: data.length, path: stored } });
    expect(await ls(path.join(msgDir, 'attach'))).toEqual(['.data.bin.md5', 'data.bin']);
  });

  it('stores under the given name', async () => {
    const src = await source('orig.txt', 'hello');
    expect(await t.spool.attach(id, src, 'renamed.txt')).toMatchObject({ name: 'renamed.txt', md5: md5('hello'), size: 5 });
    expect(await attachmentNames(msgDir)).toEqual(['renamed.txt']);
  });

  it('replaces an attachment of the same name', async () => {
    const a = await source('a.txt', 'first');
    const b = await source('b.txt', 'second version');
    await t.spool.attach(id, a, 'same.txt');
    const r = await t.spool.attach(id, b, 'same.txt');
    expect(r).toEqual({ name: 'same.txt', md5: md5('second version'), size: 14 });
    const list = await listAttachments(msgDir);
    expect(Object.keys(list)).toEqual(['same.txt']);
    expect(list['same.txt'].md5).toBe(md5('second version'));
    expect((await fs.stat(path.join(msgDir, 'attach', 'same.txt'))).ino).toBe((await fs.stat(b)).ino);
    expect(await ls(path.join(msgDir, 'attach'))).toEqual(['.same.txt.md5', 'same.txt']);
  });

  it('attaching the same file again under the same name leaves no temp name', async () => {
    // Both names are hard links to one inode: rename(2) is then a no-op that keeps the source name.
    const src = await source('same.bin', 'same bytes');
    await t.spool.attach(id, src, undefined);
    expect(await t.spool.attach(id, src, undefined)).toEqual({ name: 'same.bin', md5: md5('same bytes'), size: 10 });
    expect(await ls(path.join(msgDir, 'attach'))).toEqual(['.same.bin.md5', 'same.bin']);
  });

  it('keeps an attachment whose name ends in .tmp (a legitimate name)', async () => {
    const src = await source('x.tmp', 'data');
    await t.spool.attach(id, src, undefined);
    expect(await attachmentNames(msgDir)).toEqual(['x.tmp']);
    await recoverSpool(t.spool);
    expect(await attachmentNames(msgDir)).toEqual(['x.tmp']);
  });

  it('refuses with the classic texts of spec §2.4', async () => {
    const ok = await source('ok.txt', 'x');
    expect(await refusal(t.spool.attach(id, 'relative/ok.txt', undefined))).toBe('Invalid pathname, must be normalized relative/ok.txt (ie. must start with /');
    const unnormal = `${files}/../files/ok.txt`;
    expect(await refusal(t.spool.attach(id, unnormal, undefined))).toBe(`Invalid pathname, must be normalized ${unnormal} (ie. must start with /`);
    const missing = path.join(files, 'missing.txt');
    expect(await refusal(t.spool.attach(id, missing, undefined))).toBe(`No such file ${missing} to attach to message`);
    expect(await refusal(t.spool.attach(id, files, undefined))).toBe(`Attachment currently cannot be a directory ${files}`);
    const dot = await source('.hidden', 'x');
    expect(await refusal(t.spool.attach(id, dot, undefined))).toBe('Attachment name as a dot-file not allowed: .hidden');
    expect(await refusal(t.spool.attach(id, ok, '.named'))).toBe('Attachment name as a dot-file not allowed: .named');
    const bad = await source('a$b', 'x');
    expect(await refusal(t.spool.attach(id, bad, undefined))).toBe('Attachment name has invalid character. not allowed: a$b');
    expect(await refusal(t.spool.attach(id, ok, 'a<b'))).toBe('Attachment name has invalid character. not allowed: a<b');
    expect(await refusal(t.spool.attach(id, ok, 'sub/dir'))).toBe('Attachment name has invalid character. not allowed: sub/dir');
    // Longer than a file name holds, counted in UTF-8: refused before anything is stored.
    expect(await refusal(t.spool.attach(id, ok, 'é'.repeat(128)))).toBe('Attachment name too long: expected at most 255 bytes (UTF-8), received 256');
    const fifo = path.join(files, 'fifo');
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [fifo]);
    expect(await refusal(t.spool.attach(id, fifo, undefined))).toBe(`Attachment currently not of supported type: ${fifo}`);
    if (!isRoot()) {
      const unreadable = await source('secret', 'x');
      await fs.chmod(unreadable, 0o000);
      expect(await refusal(t.spool.attach(id, unreadable, undefined))).toBe(`Attachment currently cannot be read: ${unreadable}`);
    }
    expect(await attachmentNames(msgDir)).toEqual([]);
  });
});

describe('deleteAttachment', () => {
  it('answers the classic texts', async () => {
    expect(await t.spool.deleteAttachment(id, 'x')).toBe('No attach directory for msg');
    const src = await source('keep.txt', 'x');
    await t.spool.attach(id, src, undefined);
    expect(await t.spool.deleteAttachment(id, 'nope')).toBe('No attachment with that named for msg');
    expect(await t.spool.deleteAttachment(id, '../msg')).toBe('No attachment with that named for msg');
    expect(await t.spool.deleteAttachment(id, '.keep.txt.tmp')).toBe('No attachment with that named for msg');
    expect(await t.spool.deleteAttachment(id, 'keep.txt')).toBeNull();
    expect(await attachmentNames(msgDir)).toEqual([]);
    expect(await t.spool.deleteAttachment(id, 'keep.txt')).toBe('No attachment with that named for msg');
    expect(await fs.readFile(src, 'utf8')).toBe('x');
  });
});

describe('listAttachments', () => {
  it('lists every non-dot entry sorted, with md5, size and absolute path', async () => {
    expect(await listAttachments(msgDir)).toEqual({});
    for (const [n, data] of [
      ['b.txt', 'bb'],
      ['a.txt', 'a'],
      ['c.txt', ''],
    ] as const)
      await t.spool.attach(id, await source(n, data), undefined);
    await fs.writeFile(path.join(msgDir, 'attach', '.dotted'), 'ignored');
    const list = await listAttachments(msgDir);
    expect(Object.keys(list)).toEqual(['a.txt', 'b.txt', 'c.txt']);
    expect(list['b.txt']).toEqual({ md5: md5('bb'), size: 2, path: path.join(msgDir, 'attach', 'b.txt') });
    expect(list['c.txt'].size).toBe(0);
  });
});

describe('a symlink given as the source', () => {
  it("stores the file it points to (absolute or relative link) under the link's name, never the link", async () => {
    const target = await source('a.txt', 'target bytes');
    const links = { 'abs.txt': target, 'rel.txt': 'a.txt' };
    for (const [name, to] of Object.entries(links)) {
      await fs.symlink(to, path.join(files, name));
      expect(await attachFile(msgDir, path.join(files, name), undefined, new DirSync()), name).toEqual({ name, md5: md5('target bytes'), size: 12 });
      const stored = path.join(msgDir, 'attach', name);
      expect((await fs.lstat(stored)).isFile(), name).toBe(true);
      expect(await fs.readFile(stored, 'utf8')).toBe('target bytes');
    }
  });
});

describe('across filesystems', () => {
  // /dev/shm is a tmpfs on Linux; os.tmpdir() is usually on the root disk. When they are different
  // filesystems, link(2) fails with EXDEV and rq copies the bytes instead (the classic refused).
  // When they are the same (or there is no /dev/shm) no second filesystem is at hand without
  // mounting one, which needs privileges a test must not assume; the copy path is then untested.
  it('copies a file from another filesystem, with the right md5', async (ctx) => {
    const shm = '/dev/shm';
    const other = await fs.stat(shm).catch(() => null);
    if (!other || other.dev === (await fs.stat(os.tmpdir())).dev) {
      ctx.skip();
      return;
    }
    const dir = await fs.mkdtemp(path.join(shm, 'rq-attach-'));
    try {
      const data = randomBytes(1024 * 1024 + 17);
      const src = path.join(dir, 'remote.bin');
      await fs.writeFile(src, data);
      const r = await attachFile(msgDir, src, undefined, new DirSync());
      expect(r).toEqual({ name: 'remote.bin', md5: md5(data), size: data.length });
      const stored = path.join(msgDir, 'attach', 'remote.bin');
      const st = await fs.stat(stored);
      expect(st.dev).not.toBe(other.dev);
      expect(st.ino).not.toBe((await fs.stat(src)).ino);
      expect((await fs.readFile(stored)).equals(data)).toBe(true); // toEqual walks 1 MB byte by byte
      expect(await ls(path.join(msgDir, 'attach'))).toEqual(['.remote.bin.md5', 'remote.bin']);
      // And the other way round: a spool on the tmpfs attaching a file from os.tmpdir().
      const shmMsg = path.join(dir, 'msg');
      await fs.mkdir(shmMsg);
      const local = await source('local.bin', 'local bytes');
      expect(await attachFile(shmMsg, local, undefined, new DirSync())).toEqual({ name: 'local.bin', md5: md5('local bytes'), size: 11 });
      expect((await fs.stat(path.join(shmMsg, 'attach', 'local.bin'))).ino).not.toBe((await fs.stat(local)).ino);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('attachment names and links', () => {
  it('names come sorted, without dot entries; none without attach/; a broken attach/ is an error, not "none"', async () => {
    const attach = path.join(msgDir, 'attach');
    await fs.mkdir(attach, { recursive: true });
    for (const n of ['zeta', 'alpha', '.tmp-upload', 'mid']) await fs.writeFile(path.join(attach, n), n);
    expect(await attachmentNames(msgDir)).toEqual(['alpha', 'mid', 'zeta']);
    expect(await attachmentNames(path.join(t.root, 'no-such-msg'))).toEqual([]);
    await fs.rm(attach, { recursive: true });
    await fs.writeFile(attach, 'not a directory');
    await expect(attachmentNames(msgDir)).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('linking a message without attachments makes no attach/ in the other; with some, hard links of each', async () => {
    const to = path.join(t.root, 'copy');
    await fs.mkdir(to);
    await linkAttachments(msgDir, to);
    expect(await fs.readdir(to)).toEqual([]);
    await fs.mkdir(path.join(msgDir, 'attach'), { recursive: true });
    await fs.writeFile(path.join(msgDir, 'attach', 'a.txt'), 'bytes');
    await linkAttachments(msgDir, to);
    const [src, dst] = await Promise.all([fs.stat(path.join(msgDir, 'attach', 'a.txt')), fs.stat(path.join(to, 'attach', 'a.txt'))]);
    expect(dst.ino).toBe(src.ino);
  });
});
