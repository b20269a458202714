// Opening below a message directory as a hostile script leaves it: links at every component, FIFOs, sockets, devices, directories.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRqError } from '../../src/errors.js';
import { LazySums, keptSum, sumName, sumRecord } from '../../src/spool/attachment-sums.js';
import { listAttachments } from '../../src/spool/attachments.js';
import { SafeDir, kindOf, openBeneath, readMessageFile, readMessageFileSync } from '../../src/spool/beneath.js';

const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');

let root: string;
let msgDir: string;
let secret: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-beneath-'));
  msgDir = path.join(root, 'msg');
  await fs.mkdir(path.join(msgDir, 'job'), { recursive: true });
  await fs.mkdir(path.join(msgDir, 'attach'));
  await fs.mkdir(path.join(root, 'elsewhere'));
  secret = path.join(root, 'elsewhere', 'secret.txt');
  await fs.writeFile(secret, 'not for the web', { mode: 0o600 });
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

async function refusalOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isRqError(err, 'RQ_ERR_FILE_NOT_FOUND')).toBe(true);
  return (err as Error).message;
}

describe('openBeneath', () => {
  it('opens a regular file and reads it', async () => {
    await fs.writeFile(path.join(msgDir, 'job', 'stdio.log'), 'hello');
    const { fh, stat } = await openBeneath(msgDir, ['job', 'stdio.log'], 'Log file stdio.log');
    try {
      expect(stat.size).toBe(5n);
      expect(await fh.readFile('utf8')).toBe('hello');
    } finally {
      await fh.close();
    }
  });

  it('refuses a link as the last component, to a file or to a device', async () => {
    await fs.symlink(secret, path.join(msgDir, 'job', 'leak.log'));
    await fs.symlink('/dev/zero', path.join(msgDir, 'attach', 'zero.bin'));
    expect(await refusalOf(openBeneath(msgDir, ['job', 'leak.log'], 'Log file leak.log'))).toBe('Log file leak.log not found (not a regular file: a symlink)');
    expect(await refusalOf(openBeneath(msgDir, ['attach', 'zero.bin'], 'Attachment zero.bin'))).toContain('a symlink');
  });

  it('refuses job/ swapped for a link to another directory, though the file there is regular', async () => {
    await fs.rename(path.join(msgDir, 'job'), path.join(msgDir, 'job.real'));
    await fs.symlink(path.join(root, 'elsewhere'), path.join(msgDir, 'job'));
    expect(await refusalOf(openBeneath(msgDir, ['job', 'secret.txt'], 'Log file secret.txt'))).toBe('Log file secret.txt not found');
  });

  it('refuses the message directory itself swapped for a link', async () => {
    const linked = path.join(root, 'linked-msg');
    await fs.mkdir(path.join(root, 'elsewhere', 'job'));
    await fs.writeFile(path.join(root, 'elsewhere', 'job', 'stdio.log'), 'elsewhere');
    await fs.symlink(path.join(root, 'elsewhere'), linked);
    await refusalOf(openBeneath(linked, ['job', 'stdio.log'], 'Log file stdio.log'));
  });

  it('never opens a FIFO (an open would block a thread-pool thread until a writer came)', async () => {
    execFileSync('mkfifo', [path.join(msgDir, 'job', 'fifo.log')]);
    const started = Date.now();
    expect(await refusalOf(openBeneath(msgDir, ['job', 'fifo.log'], 'Log file fifo.log'))).toBe('Log file fifo.log not found (not a regular file: a fifo)');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('names a socket and a directory as what they are, with no path in the text', async () => {
    const server = net.createServer();
    const sock = path.join(msgDir, 'job', 'sock.log');
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const text = await refusalOf(openBeneath(msgDir, ['job', 'sock.log'], 'Log file sock.log'));
      expect(text).toBe('Log file sock.log not found (not a regular file: a socket)');
      expect(text).not.toContain(root);
    } finally {
      server.close();
    }
    await fs.mkdir(path.join(msgDir, 'job', 'dir.log'));
    expect(await refusalOf(openBeneath(msgDir, ['job', 'dir.log'], 'Log file dir.log'))).toContain('a directory');
  });

  it('a missing file, a missing job/ and a job/ that is a file are plain not-found', async () => {
    expect(await refusalOf(openBeneath(msgDir, ['job', 'none.log'], 'Log file none.log'))).toBe('Log file none.log not found');
    await fs.rm(path.join(msgDir, 'job'), { recursive: true });
    expect(await refusalOf(openBeneath(msgDir, ['job', 'x.log'], 'Log file x.log'))).toBe('Log file x.log not found');
    await fs.writeFile(path.join(msgDir, 'job'), 'a file');
    expect(await refusalOf(openBeneath(msgDir, ['job', 'x.log'], 'Log file x.log'))).toBe('Log file x.log not found');
  });

  it('entry names with separators or dot-dot are refused before any lookup', async () => {
    const dir = await SafeDir.open(msgDir);
    try {
      for (const bad of ['', '.', '..', 'a/b']) expect(() => dir.entry(bad)).toThrow(/expected a plain file name/);
    } finally {
      await dir.close();
    }
  });

  it('kindOf names every type', async () => {
    execFileSync('mkfifo', [path.join(msgDir, 'f')]);
    await fs.symlink('/nowhere', path.join(msgDir, 'l'));
    const kinds = await Promise.all(['job', 'f', 'l'].map(async (n) => kindOf(await fs.lstat(path.join(msgDir, n)))));
    expect(kinds).toEqual(['directory', 'fifo', 'symlink']);
    expect(kindOf(await fs.lstat('/dev/null'))).toBe('device');
    expect(kindOf(await fs.lstat(secret))).toBe('file');
  });
});

describe('listAttachments of what a script left', () => {
  const attach = () => path.join(msgDir, 'attach');

  it('lists links, FIFOs and directories as what they are, with no md5 or size of what they point at', async () => {
    await fs.symlink('/etc/shadow', path.join(attach(), 'shadow.txt'));
    await fs.symlink('/dev/zero', path.join(attach(), 'zero.bin'));
    execFileSync('mkfifo', [path.join(attach(), 'fifo.txt')]);
    await fs.mkdir(path.join(attach(), 'sub'));
    await fs.writeFile(path.join(attach(), 'ok.txt'), 'plain');
    const list = await listAttachments(msgDir, new LazySums());
    const p = (n: string) => path.join(attach(), n);
    expect(list).toEqual({
      'fifo.txt': { md5: null, size: null, path: p('fifo.txt'), type: 'fifo' },
      'ok.txt': { md5: md5('plain'), size: 5, path: p('ok.txt') },
      'shadow.txt': { md5: null, size: null, path: p('shadow.txt'), type: 'symlink' },
      sub: { md5: null, size: null, path: p('sub'), type: 'directory' },
      'zero.bin': { md5: null, size: null, path: p('zero.bin'), type: 'symlink' },
    });
  });

  it('an attach/ swapped for a link lists nothing from where it points', async () => {
    await fs.rm(attach(), { recursive: true });
    await fs.symlink(path.join(root, 'elsewhere'), attach());
    expect(await listAttachments(msgDir, new LazySums())).toEqual({});
  });

  it('a file a script left is read once within the bound, never above it', async () => {
    await fs.writeFile(path.join(attach(), 'small.bin'), 'x'.repeat(100));
    await fs.writeFile(path.join(attach(), 'big.bin'), 'y'.repeat(101));
    const lazy = new LazySums(100);
    const first = await listAttachments(msgDir, lazy);
    expect(first['small.bin']).toMatchObject({ md5: md5('x'.repeat(100)), size: 100 });
    expect(first['big.bin']).toMatchObject({ md5: null, size: 101 });
    // Remembered by inode, size and mtime: a rewrite of the same size with a new mtime is read again.
    await fs.writeFile(path.join(attach(), 'small.bin'), 'z'.repeat(100));
    const later = new Date(Date.now() + 5000);
    await fs.utimes(path.join(attach(), 'small.bin'), later, later);
    expect((await listAttachments(msgDir, lazy))['small.bin'].md5).toBe(md5('z'.repeat(100)));
  });

  it('a kept sum is used only for the very file it was computed on', async () => {
    const file = path.join(attach(), 'kept.bin');
    await fs.writeFile(file, 'kept bytes');
    const st = await fs.lstat(file, { bigint: true });
    // A sum no file has: proof the listing took the kept one and read nothing.
    const recorded = 'f'.repeat(32);
    await fs.writeFile(path.join(attach(), sumName('kept.bin')), sumRecord(recorded, st));
    const dir = await SafeDir.open(msgDir, ['attach']);
    try {
      expect(await keptSum(dir, 'kept.bin', st)).toBe(recorded);
      expect(await keptSum(dir, 'kept.bin', { ...st, size: st.size + 1n } as typeof st)).toBeNull();
      expect(await keptSum(dir, 'kept.bin', { ...st, ino: st.ino + 1n } as typeof st)).toBeNull();
      expect(await keptSum(dir, 'kept.bin', { ...st, mtimeNs: st.mtimeNs + 1n } as typeof st)).toBeNull();
    } finally {
      await dir.close();
    }
    expect((await listAttachments(msgDir, new LazySums(0)))['kept.bin']).toEqual({ md5: recorded, size: 10, path: file });
    await fs.writeFile(path.join(attach(), sumName('kept.bin')), '{"md5": "not hex"');
    expect((await listAttachments(msgDir, new LazySums(0)))['kept.bin'].md5).toBeNull();
  });
});

describe('readMessageFile and readMessageFileSync', () => {
  const file = (n: string) => path.join(msgDir, n);

  it('read a regular file whole, at the bound exactly', async () => {
    await fs.writeFile(file('status'), '{"job_status":"ok"}');
    expect(await readMessageFile(msgDir, 'status')).toBe('{"job_status":"ok"}');
    expect(await readMessageFile(msgDir, 'status', 19)).toBe('{"job_status":"ok"}');
    expect(readMessageFileSync(file('status'), 19)).toBe('{"job_status":"ok"}');
  });

  it('refuse a file one byte over the bound, naming its size and the bound', async () => {
    await fs.writeFile(file('msg'), 'x'.repeat(20));
    expect(await refusalOf(readMessageFile(msgDir, 'msg', 19))).toBe('"msg" not found (20 bytes, more than the 19 rq reads of a message file)');
    let err: unknown;
    try {
      readMessageFileSync(file('msg'), 19);
    } catch (e) {
      err = e;
    }
    expect(isRqError(err, 'RQ_ERR_FILE_NOT_FOUND')).toBe(true);
    expect((err as Error).message).toBe('"msg" not found (20 bytes, more than the 19 rq reads of a message file)');
  });

  it('a missing file is ENOENT, as callers that tell "none" from "broken" expect', async () => {
    await expect(readMessageFile(msgDir, 'history')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(() => readMessageFileSync(file('history'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('a FIFO or a link in place of the file is refused at once, never read', async () => {
    execFileSync('mkfifo', [file('dependents')]);
    await fs.symlink(secret, file('msg'));
    expect(await refusalOf(readMessageFile(msgDir, 'dependents'))).toBe('"dependents" not found (not a regular file: a fifo)');
    expect(await refusalOf(readMessageFile(msgDir, 'msg'))).toBe('"msg" not found (not a regular file: a symlink)');
    let err: unknown;
    try {
      readMessageFileSync(file('dependents'));
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toBe('"dependents" not found (not a regular file: a fifo)');
    expect(() => readMessageFileSync(file('msg'))).toThrow(expect.objectContaining({ code: 'ELOOP' }));
  });

  it('a message dir that is itself a link is not read through', async () => {
    await fs.writeFile(path.join(root, 'elsewhere', 'msg'), '{"msg_id":"x"}');
    await fs.symlink(path.join(root, 'elsewhere'), path.join(root, 'linked'));
    await expect(readMessageFile(path.join(root, 'linked'), 'msg')).rejects.toMatchObject({ code: expect.stringMatching(/^(ELOOP|ENOTDIR)$/) });
  });
});

describe('SafeDir', () => {
  it('open walks each part, and a missing part closes what it had opened', async () => {
    await fs.writeFile(path.join(msgDir, 'job', 'a.log'), 'a');
    const dir = await SafeDir.open(msgDir, ['job']);
    try {
      expect((await dir.list()).map((e) => e.name)).toEqual(['a.log']);
      expect((await dir.lstat('a.log')).size).toBe(1n);
    } finally {
      await dir.close();
    }
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    await expect(SafeDir.open(msgDir, ['job', 'none', 'deeper'])).rejects.toMatchObject({ code: 'ENOENT' });
    expect(fds()).toBe(before);
  });

  it('openFile names what it opened and refuses a file swapped between its check and its open', async () => {
    await fs.writeFile(path.join(msgDir, 'job', 'x.log'), 'x');
    const dir = await SafeDir.open(msgDir, ['job']);
    try {
      expect(await refusalOf(dir.openFile('none.log'))).toBe('"none.log" not found');
      const { fh, stat } = await dir.openFile('x.log');
      expect(stat.isFile()).toBe(true);
      await fh.close();
    } finally {
      await dir.close();
    }
  });
});
