// The spool's real file layer: syncfs and blank dirs through the native addons (no fork per checkpoint, one thread-pool trip per refill), and their refusals.
import { execFile } from 'node:child_process';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { openFilesUnder } from '../helpers/open-files.js';
import { PROJECT } from '../helpers/rq-root.js';

const run = promisify(execFile);

/** Linux's O_CLOEXEC (node's fs.constants has no name for it). */
const O_CLOEXEC = 0o2000000;

describe('nodeSpoolFs.syncfs', () => {
  it('syncs without running any program: it works with nothing on PATH (the built addon, not `sync -f`)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-syncfs-'));
    try {
      const code = `import('${path.join(PROJECT, 'dist', 'spool', 'spool-fs.js')}').then((m) => m.nodeSpoolFs.syncfs(process.argv[1])).then(() => console.log('synced'), (e) => console.log('failed', e.message))`;
      const { stdout } = await run(process.execPath, ['-e', code, dir], { env: { PATH: '' } });
      expect(stdout.trim()).toBe('synced');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('a directory that is not there is refused with its errno and its path', async () => {
    const missing = path.join(os.tmpdir(), 'rq-syncfs-missing', 'x');
    await expect(nodeSpoolFs.syncfs(missing)).rejects.toMatchObject({ code: 'ENOENT', message: expect.stringContaining(`syncfs ${missing}: `) });
  });
});

describe('nodeSpoolFs.makeBlanks', () => {
  const makeBlanks = nodeSpoolFs.makeBlanks!;

  it('makes each dir with its subdirs and empty files, mode 0644 under the umask; gives each inode and its first file open', async () => {
    expect(typeof nodeSpoolFs.makeBlanks, 'the addon is built').toBe('function');
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blanks-'));
    try {
      const dirs = ['a', 'b', 'c'].map((n) => path.join(root, n));
      const made = await makeBlanks(dirs, ['job'], ['msg', 'history', 'job/stdio.log'], true);
      expect(made).toHaveLength(3);
      for (const [i, [ino, fd]] of made.entries()) {
        expect(ino, dirs[i]).toBe((await fs.stat(dirs[i])).ino);
        // The msg, open for writing and closed at exec (FD_CLOEXEC: no script inherits it).
        expect(fsSync.fstatSync(fd).ino).toBe((await fs.stat(path.join(dirs[i], 'msg'))).ino);
        // fdinfo gives the flags in octal.
        expect(parseInt(/flags:\s+(\d+)/.exec(fsSync.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1], 8) & O_CLOEXEC, 'O_CLOEXEC').not.toBe(0);
        fsSync.writeSync(fd, `written ${i}`);
        fsSync.closeSync(fd);
        expect(await fs.readFile(path.join(dirs[i], 'msg'), 'utf8')).toBe(`written ${i}`);
        await fs.writeFile(path.join(dirs[i], 'msg'), '');
      }
      const umask = process.umask();
      for (const d of dirs) {
        expect((await fs.readdir(d)).sort()).toEqual(['history', 'job', 'msg']);
        for (const f of ['msg', 'history', 'job/stdio.log']) {
          const st = await fs.stat(path.join(d, f));
          expect({ size: st.size, mode: st.mode & 0o777 }, f).toEqual({ size: 0, mode: 0o644 & ~umask });
        }
      }
      const light = await makeBlanks([path.join(root, 'light')], [], ['msg'], true);
      expect(light).toHaveLength(1);
      fsSync.closeSync(light[0][1]);
      // Without keepOpen (a process short of descriptors): the inode, no descriptor, nothing left open.
      const closed = await makeBlanks([path.join(root, 'closed')], ['job'], ['msg', 'job/stdio.log'], false);
      expect(closed).toEqual([[(await fs.stat(path.join(root, 'closed'))).ino, -1]]);
      expect(openFilesUnder(path.join(root, 'closed'))).toEqual([]);
      expect(await fs.readdir(path.join(root, 'light'))).toEqual(['msg']);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('stops at the first that fails, giving only the whole ones before it, the failed one left closed; a file is never opened over', async () => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blanks-'));
    try {
      await fs.mkdir(path.join(root, 'taken'));
      const made = await makeBlanks(
        ['one', 'taken', 'three'].map((n) => path.join(root, n)),
        [],
        ['msg'],
        true,
      );
      expect(made.map(([ino]) => ino)).toEqual([(await fs.stat(path.join(root, 'one'))).ino]);
      fsSync.closeSync(made[0][1]);
      expect((await fs.readdir(root)).sort()).toEqual(['one', 'taken']);
      expect(await fs.readdir(path.join(root, 'taken'))).toEqual([]);
      expect(await makeBlanks([path.join(root, 'no-parent', 'x')], [], ['msg'], true)).toEqual([]);
      // The second msg meets the first (O_EXCL): the blank is left half made, not given, and its first file not left open.
      expect(await makeBlanks([path.join(root, 'twice')], [], ['msg', 'msg'], true)).toEqual([]);
      expect(await fs.readdir(path.join(root, 'twice'))).toEqual(['msg']);
      expect(openFilesUnder(root)).toEqual([]);
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });

  it('refuses arguments that are not three arrays of strings and a boolean, with its code', () => {
    const bad: unknown[][] = [[], [['a'], [], []], [['a'], [], [], 'yes'], ['a', [], [], true], [['a'], [], [7], true], [[{}], [], [], true]];
    for (const args of bad)
      expect(() => (makeBlanks as (...a: unknown[]) => unknown)(...args), JSON.stringify(args)).toThrow(
        expect.objectContaining({ code: 'RQ_ERR_BLANKS', name: 'TypeError' }),
      );
  });
});
