// The spool's real file layer: syncfs through the native addon (no fork of the queue process per checkpoint), and its refusals.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { PROJECT } from '../helpers/rq-root.js';

const run = promisify(execFile);

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
