// writeAll: a write(2) that takes less than asked is continued from where it stopped until the whole buffer is in the file.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type PartialWriter, writeAll } from '../../src/spool/write-all.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-writeall-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

describe('writeAll', () => {
  it('asks again for exactly the rest after each short write, and the file gets every byte once', async () => {
    const file = path.join(dir, 'f');
    const fh = await fs.open(file, 'w');
    const asked: [number, number][] = [];
    // A real file under a handle whose every write(2) stops after 3 bytes, as one on a filling disk does.
    const short: PartialWriter = {
      write: (buf, off, len) => {
        asked.push([off, len]);
        return fh.write(buf, off, Math.min(len, 3));
      },
    };
    try {
      await writeAll(short, Buffer.from('0123456789'));
    } finally {
      await fh.close();
    }
    expect(asked).toEqual([
      [0, 10],
      [3, 7],
      [6, 4],
      [9, 1],
    ]);
    expect(await fs.readFile(file, 'utf8')).toBe('0123456789');
  });

  it('fails with EIO when a write takes nothing, rather than loop for ever', async () => {
    const stuck: PartialWriter = { write: async () => ({ bytesWritten: 0 }) };
    await expect(writeAll(stuck, Buffer.from('x'))).rejects.toMatchObject({ code: 'EIO', message: 'write took no bytes' });
    await expect(writeAll(stuck, Buffer.alloc(0))).resolves.toBeUndefined();
  });
});
