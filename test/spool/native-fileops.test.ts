// The one-trip file jobs of src/spool/native/rq-fileops.c: what they make, what they refuse to follow, and errors in node's form.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { overwriteFile } from '../../src/spool/durable.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';

const { stageRun, overwrite, fsyncPath } = nodeSpoolFs;
let dir: string;
let outside: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-fileops-'));
  outside = path.join(dir, 'elsewhere');
  await fs.writeFile(outside, 'untouched');
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const kind = async (p: string) => {
  const st = await fs.lstat(p).catch(() => null);
  return st === null ? 'none' : st.isFile() ? `file ${st.size}` : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
};

it('the addon is built: the spool takes these paths', () => {
  expect([typeof stageRun, typeof overwrite, typeof fsyncPath]).toEqual(['function', 'function', 'function']);
});

describe('stageRun', () => {
  it('makes job/, job/stdio.log, history and an empty pid, and keeps what is already there', async () => {
    const msg = path.join(dir, 'm');
    await fs.mkdir(msg);
    await fs.writeFile(path.join(msg, 'history'), 'a line\n');
    await stageRun!(msg);
    await stageRun!(msg);
    expect(await Promise.all(['job', 'job/stdio.log', 'history', 'pid'].map((f) => kind(path.join(msg, f))))).toEqual(['dir', 'file 0', 'file 7', 'file 0']);
  });

  it('follows no link a script left as job/ or history and blocks on no FIFO: it stops there, touching nothing outside', async () => {
    const msg = path.join(dir, 'm');
    await fs.mkdir(msg);
    await fs.symlink(dir, path.join(msg, 'job'));
    await expect(stageRun!(msg)).rejects.toMatchObject({ code: 'ENOTDIR', syscall: 'open' });
    await fs.rm(path.join(msg, 'job'));
    await fs.symlink(outside, path.join(msg, 'history'));
    await expect(stageRun!(msg)).rejects.toMatchObject({ code: 'ELOOP' });
    await fs.rm(path.join(msg, 'history'));
    execFileSync('mkfifo', [path.join(msg, 'history')]);
    await expect(stageRun!(msg)).rejects.toMatchObject({ code: 'ENXIO' });
    await fs.rm(path.join(msg, 'history'));
    await fs.mkdir(path.join(msg, 'pid'));
    await expect(stageRun!(msg)).rejects.toMatchObject({ code: 'EISDIR' });
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
    expect(await fs.readdir(dir)).toEqual(['elsewhere', 'm']);
  });

  it('a message that moved away is ENOENT, with its path, in the form of node fs errors', async () => {
    const gone = path.join(dir, 'gone');
    await expect(stageRun!(gone)).rejects.toMatchObject({
      code: 'ENOENT',
      syscall: 'open',
      path: gone,
      message: `ENOENT: no such file or directory, open '${gone}'`,
    });
  });
});

describe('overwrite', () => {
  it('rewrites in place (same inode, shorter text leaves no tail), says when it made the file', async () => {
    const file = path.join(dir, 'status');
    expect(await overwrite!(file, '{"job_status":"a long first text"}', false)).toBe(true);
    const ino = (await fs.stat(file)).ino;
    expect(await overwrite!(file, '{"x":1}', true)).toBe(false);
    expect(await fs.readFile(file, 'utf8')).toBe('{"x":1}');
    expect((await fs.stat(file)).ino).toBe(ino);
  });

  it('refuses a link, a FIFO or a directory at the name, and overwriteFile then replaces it by a regular file', async () => {
    const file = path.join(dir, 'status');
    for (const [plant, code] of [
      [() => fs.symlink(outside, file), 'ELOOP'],
      [async () => execFileSync('mkfifo', [file]), 'RQ_ERR_NOT_REGULAR_FILE'],
      [() => fs.mkdir(path.join(file, 'deep'), { recursive: true }), 'EISDIR'],
    ] as const) {
      await plant();
      await expect(overwrite!(file, 'x', false), code).rejects.toMatchObject({ code, syscall: 'open', path: file });
      await overwriteFile(file, '{"ok":1}');
      expect(await kind(file), code).toBe('file 8');
      await fs.rm(file);
    }
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
  });

  it('refuses arguments of the wrong kind with its code', () => {
    for (const args of [[], ['a'], ['a', 'b'], [1, 'b', true], ['a', 2, true], ['a', 'b', 'yes'], ['status\0/../elsewhere', 'b', false]])
      expect(() => (overwrite as (...a: unknown[]) => unknown)(...args), JSON.stringify(args)).toThrow(
        expect.objectContaining({ code: 'RQ_ERR_FILEOPS', name: 'TypeError' }),
      );
  });
});

describe('fsyncPath', () => {
  it('syncs a directory or a file; a missing one is ENOENT with its path', async () => {
    await fsyncPath!(dir);
    await fsyncPath!(outside);
    await expect(fsyncPath!(path.join(dir, 'no'))).rejects.toMatchObject({ code: 'ENOENT', path: path.join(dir, 'no') });
  });
});
