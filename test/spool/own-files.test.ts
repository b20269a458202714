// rq's own files of a message dir opened for writing where a script left a FIFO, a link, a socket or a directory in their place.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import { closeSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { APPEND, TRUNCATE, UPDATE, openOwn, openOwnSync, ownDirSync } from '../../src/spool/own-files.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { RqError } from '../../src/errors.js';
import { removePid } from '../../src/spool/message-files.js';

let dir: string;
let outside: string;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-own-'));
  await fs.mkdir(path.join(dir, 'elsewhere'));
  outside = path.join(dir, 'elsewhere', 'target');
  await fs.writeFile(outside, 'untouched');
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

const plants: [string, (p: string) => Promise<unknown>][] = [
  ['a FIFO', async (p) => execFileSync('mkfifo', [p])],
  ['a link to a file', (p) => fs.symlink(outside, p)],
  ['a link to a directory', (p) => fs.symlink(path.dirname(outside), p)],
  ['a device (a writer opens it at once)', async (p) => execFileSync('mknod', [p, 'c', '1', '3'])],
  [
    'a directory with files',
    async (p) => {
      await fs.mkdir(p);
      await fs.writeFile(path.join(p, 'inner'), 'x');
    },
  ],
];

describe('openOwnSync', () => {
  it.each(plants)('%s in place of the file: removed, a regular file made, nothing outside changed', async (_what, plant) => {
    const file = path.join(dir, 'history');
    await plant(file);
    const fd = openOwnSync(nodeSpoolFs, file, APPEND);
    try {
      writeSync(fd, 'line\n');
    } finally {
      closeSync(fd);
    }
    expect((await fs.lstat(file)).isFile()).toBe(true);
    expect(await fs.readFile(file, 'utf8')).toBe('line\n');
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
    expect(await fs.readdir(path.dirname(outside))).toEqual(['target']);
  });

  it('a regular file is appended to as it is, without a second open', async () => {
    const file = path.join(dir, 'pid');
    await fs.writeFile(file, 'old ');
    let opens = 0;
    const counting = { ...nodeSpoolFs, openSync: (p: string, f: string | number, m?: number) => (opens++, nodeSpoolFs.openSync(p, f, m)) };
    closeSync(openOwnSync(counting, file, APPEND));
    expect(opens).toBe(1);
    const fd = openOwnSync(nodeSpoolFs, file, TRUNCATE);
    writeSync(fd, '42');
    closeSync(fd);
    expect(await fs.readFile(file, 'utf8')).toBe('42');
  });

  it('other failures are passed on, and a name that keeps coming back is not fought over', async () => {
    const eio = {
      ...nodeSpoolFs,
      openSync: () => {
        throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
      },
    };
    expect(() => openOwnSync(eio, path.join(dir, 'x'), APPEND)).toThrow(/EIO/);
    let removed = 0;
    const stubborn = {
      ...nodeSpoolFs,
      openSync: () => {
        throw Object.assign(new Error('ELOOP: too many symbolic links'), { code: 'ELOOP' });
      },
      rmSync: () => void removed++,
    };
    expect(() => openOwnSync(stubborn, path.join(dir, 'x'), APPEND)).toThrow(/ELOOP/);
    expect(removed).toBe(1);
  });
});

describe('openOwn', () => {
  it.each(plants)('%s in place of status: replaced for UPDATE-or-create as overwriteFile does it', async (_what, plant) => {
    const file = path.join(dir, 'status');
    await plant(file);
    const fh = await openOwn(nodeSpoolFs, file, TRUNCATE);
    await fh.writeFile('{"job_status":"ok"}');
    await fh.close();
    expect(await fs.readFile(file, 'utf8')).toBe('{"job_status":"ok"}');
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
  });

  it("UPDATE of a FIFO: O_RDWR opens a FIFO at once, so the handle's type refuses it; then ENOENT, for the caller to create", async () => {
    const file = path.join(dir, 'status');
    execFileSync('mkfifo', [file]);
    await expect(openOwn(nodeSpoolFs, file, UPDATE)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(fs.lstat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('ownDirSync', () => {
  it('makes job/, keeps a real one, and replaces a link or a file in its place', async () => {
    const job = path.join(dir, 'job');
    ownDirSync(nodeSpoolFs, job);
    await fs.writeFile(path.join(job, 'kept'), 'x');
    ownDirSync(nodeSpoolFs, job);
    expect(await fs.readdir(job)).toEqual(['kept']);
    await fs.rename(job, path.join(dir, 'job.real'));
    await fs.symlink(path.dirname(outside), job);
    ownDirSync(nodeSpoolFs, job);
    expect((await fs.lstat(job)).isDirectory()).toBe(true);
    expect(await fs.readdir(job)).toEqual([]);
    expect(await fs.readdir(path.dirname(outside))).toEqual(['target']);
  });

  it('a job/ made between its look and its mkdir (the run files staged meanwhile) is kept; an existing one costs no mkdir', async () => {
    const job = path.join(dir, 'job');
    const mkdirs: string[] = [];
    const racing = {
      ...nodeSpoolFs,
      mkdirSync: (p: string) => {
        mkdirs.push(p);
        // The stage of the thread pool wins the race: job/ is there, with a file in it, when this mkdir runs.
        nodeSpoolFs.mkdirSync(p);
        writeFileSync(path.join(p, 'stdio.log'), '');
        return nodeSpoolFs.mkdirSync(p);
      },
    };
    ownDirSync(racing, job);
    expect(await fs.readdir(job)).toEqual(['stdio.log']);
    ownDirSync(racing, job);
    expect(mkdirs).toEqual([job]);
  });
});

const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });

describe("what is not a stranger in the file's place is not removed", () => {
  it('an I/O error or an rq error of another kind is passed on with nothing removed, sync and async', async () => {
    const file = path.join(dir, 'status');
    await fs.writeFile(file, 'kept');
    for (const err of [errno('EIO'), RqError.of('RQ_ERR_FILE_NOT_FOUND', 'status', '')]) {
      let removed = 0;
      const failing = {
        ...nodeSpoolFs,
        openSync: () => {
          throw err;
        },
        open: () => Promise.reject(err),
        rmSync: () => void removed++,
        rm: async () => void removed++,
      };
      expect(() => openOwnSync(failing, file, APPEND)).toThrow(err);
      await expect(openOwn(failing, file, APPEND)).rejects.toBe(err);
      expect(removed).toBe(0);
    }
    expect(await fs.readFile(file, 'utf8')).toBe('kept');
  });

  it('openOwn does not fight over a name that keeps coming back: one removal, then the error', async () => {
    let removed = 0;
    const stubborn = { ...nodeSpoolFs, open: () => Promise.reject(errno('ELOOP')), rm: async () => void removed++ };
    await expect(openOwn(stubborn, path.join(dir, 'x'), APPEND)).rejects.toMatchObject({ code: 'ELOOP' });
    expect(removed).toBe(1);
  });

  it("a stranger the script removes itself between rq's failed open and its removal: the file is made all the same", async () => {
    const file = path.join(dir, 'history');
    // The script's own unlink lands right after rq's open failed on its link.
    const racing =
      <A extends unknown[], R>(open: (...a: A) => R) =>
      (...a: A): R => {
        try {
          return open(...a);
        } catch (err) {
          unlinkSync(file);
          throw err;
        }
      };
    await fs.symlink(outside, file);
    closeSync(openOwnSync({ ...nodeSpoolFs, openSync: racing(nodeSpoolFs.openSync) }, file, APPEND));
    expect((await fs.lstat(file)).isFile()).toBe(true);
    await fs.rm(file);
    await fs.symlink(outside, file);
    const asyncRacing = {
      ...nodeSpoolFs,
      open: async (p: string, f: string | number, m?: number) => {
        try {
          return await nodeSpoolFs.open(p, f, m);
        } catch (err) {
          unlinkSync(file);
          throw err;
        }
      },
    };
    await (await openOwn(asyncRacing, file, TRUNCATE)).close();
    expect((await fs.lstat(file)).isFile()).toBe(true);
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
  });
});

describe('ownDirSync when mkdir fails', () => {
  it('a failure other than EEXIST (a full disk) is passed on as it is', () => {
    const full = {
      ...nodeSpoolFs,
      mkdirSync: () => {
        throw errno('ENOSPC');
      },
    };
    expect(() => ownDirSync(full, path.join(dir, 'job'))).toThrow(expect.objectContaining({ code: 'ENOSPC' }));
  });

  it('a link the script removes itself before rq does: job/ is made all the same', async () => {
    const job = path.join(dir, 'job');
    await fs.symlink(path.dirname(outside), job);
    const racing = {
      ...nodeSpoolFs,
      rmSync: (p: string, o: { recursive?: boolean; force?: boolean }) => {
        unlinkSync(p);
        nodeSpoolFs.rmSync(p, o);
      },
    };
    ownDirSync(racing, job);
    expect((await fs.lstat(job)).isDirectory()).toBe(true);
  });
});

describe('removePid at the end of a run', () => {
  it('unlinks the file in one call, takes none there as done, and removes a directory or a link a script left without following it', async () => {
    const file = path.join(dir, 'pid');
    await fs.writeFile(file, '42');
    const calls: string[] = [];
    const counting = {
      ...nodeSpoolFs,
      unlink: (p: string) => (calls.push('unlink'), nodeSpoolFs.unlink(p)),
      rm: (p: string, o: { recursive?: boolean; force?: boolean }) => (calls.push('rm'), nodeSpoolFs.rm(p, o)),
    };
    await removePid(dir, counting);
    expect(calls).toEqual(['unlink']);
    await removePid(dir, counting);
    await expect(fs.lstat(file)).rejects.toThrow(/ENOENT/);
    await fs.mkdir(path.join(file, 'deep'), { recursive: true });
    await removePid(dir, nodeSpoolFs);
    await expect(fs.lstat(file)).rejects.toThrow(/ENOENT/);
    await fs.symlink(path.dirname(outside), file);
    await removePid(dir, nodeSpoolFs);
    await expect(fs.lstat(file)).rejects.toThrow(/ENOENT/);
    expect(await fs.readdir(path.dirname(outside))).toEqual(['target']);
  });
});
