// SafeDir and readMessageFile at their edges: a name swapped between the type check and the open, errors that are not "not found", handles closed on every path.
import { execFileSync } from 'node:child_process';
import { readdirSync, renameSync, symlinkSync, unlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isRqError } from '../../src/errors.js';
import { SafeDir, kindOf, openBeneath, readMessageFile, readMessageFileSync } from '../../src/spool/beneath.js';
import { betweenTwoCalls, withNoFreeFd } from '../helpers/thread-pool-gate.js';

let root: string;
let msgDir: string;
let gateDir: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-beneath-edges-'));
  msgDir = path.join(root, 'msg');
  gateDir = path.join(root, 'gate');
  await fs.mkdir(path.join(msgDir, 'job'), { recursive: true });
  await fs.mkdir(gateDir);
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

const openFds = () => readdirSync('/proc/self/fd').length;
const log = (n: string) => path.join(msgDir, 'job', n);

async function textOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isRqError(err, 'RQ_ERR_FILE_NOT_FOUND')).toBe(true);
  return (err as Error).message;
}

/** openFile of job/x.log with `swap` done after its lstat saw a regular file and before its open. */
async function openSwapped(swap: () => void): Promise<string> {
  await fs.writeFile(log('x.log'), 'the file that was checked');
  const dir = await SafeDir.open(msgDir, ['job']);
  const before = openFds();
  try {
    return await textOf(betweenTwoCalls(gateDir, () => dir.openFile('x.log'), swap));
  } finally {
    expect(openFds()).toBe(before);
    await dir.close();
  }
}

describe('SafeDir.openFile when the name changes between its check and its open', () => {
  it('removed: plain not-found', async () => {
    expect(await openSwapped(() => unlinkSync(log('x.log')))).toBe('"x.log" not found');
  });

  it('a link put in its place: the open refuses it (ELOOP), plain not-found', async () => {
    await fs.writeFile(path.join(root, 'secret'), 'elsewhere');
    expect(
      await openSwapped(() => {
        symlinkSync(path.join(root, 'secret'), log('link'));
        renameSync(log('link'), log('x.log'));
      }),
    ).toBe('"x.log" not found');
  });

  it('a socket put in its place: the open refuses it (ENXIO), plain not-found', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(log('sock'), resolve));
    try {
      expect(await openSwapped(() => renameSync(log('sock'), log('x.log')))).toBe('"x.log" not found');
    } finally {
      server.close();
    }
  });

  it("another regular file or a FIFO put in its place: opened, then refused by the handle's inode and type", async () => {
    await fs.writeFile(log('other'), 'another file');
    expect(await openSwapped(() => renameSync(log('other'), log('x.log')))).toBe('"x.log" not found (replaced while it was opened)');
    execFileSync('mkfifo', [log('fifo')]);
    expect(await openSwapped(() => renameSync(log('fifo'), log('x.log')))).toBe('"x.log" not found (replaced while it was opened)');
  });

  it("the same inode number on another filesystem mounted over it: refused by the handle's device", async (ctx) => {
    // Two fresh tmpfs number their inodes alike, so only the device tells their files apart.
    const [a, b] = [path.join(root, 'a'), path.join(root, 'b')];
    const mounted: string[] = [];
    try {
      for (const m of [a, b]) {
        await fs.mkdir(m);
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', m]);
        mounted.unshift(m);
        await fs.mkdir(path.join(m, 'job'));
        await fs.writeFile(path.join(m, 'job', 'x.log'), m);
      }
    } catch {
      ctx.skip();
      return;
    }
    try {
      const [sa, sb] = await Promise.all([a, b].map((m) => fs.stat(path.join(m, 'job', 'x.log'))));
      expect(sb.ino).toBe(sa.ino);
      expect(sb.dev).not.toBe(sa.dev);
      const dir = await SafeDir.open(a, ['job']);
      try {
        const swap = () => {
          execFileSync('mount', ['--bind', path.join(b, 'job', 'x.log'), path.join(a, 'job', 'x.log')]);
          mounted.unshift(path.join(a, 'job', 'x.log'));
        };
        expect(await textOf(betweenTwoCalls(gateDir, () => dir.openFile('x.log'), swap))).toBe('"x.log" not found (replaced while it was opened)');
      } finally {
        await dir.close();
      }
    } finally {
      for (const m of mounted) execFileSync('umount', [m]);
    }
  });

  it("left alone: opened through the same gate, so the refusals above are the swap's doing", async () => {
    await fs.writeFile(log('x.log'), 'kept');
    const dir = await SafeDir.open(msgDir, ['job']);
    try {
      const { fh } = await betweenTwoCalls(
        gateDir,
        () => dir.openFile('x.log'),
        () => undefined,
      );
      expect(await fh.readFile('utf8')).toBe('kept');
      await fh.close();
    } finally {
      await dir.close();
    }
  });
});

describe('errors that are not "not found" are passed on', () => {
  it('an open that fails for want of a file descriptor is EMFILE, not a missing file', async () => {
    await fs.writeFile(log('x.log'), 'x');
    const dir = await SafeDir.open(msgDir, ['job']);
    try {
      await expect(withNoFreeFd(() => dir.openFile('x.log'))).rejects.toMatchObject({ code: 'EMFILE' });
      await expect(withNoFreeFd(() => openBeneath(msgDir, ['job', 'x.log'], 'Log file x.log'))).rejects.toMatchObject({ code: 'EMFILE' });
    } finally {
      await dir.close();
    }
  });

  it('a name longer than a file name can be is ENAMETOOLONG, at the file and at a directory part', async () => {
    const long = 'n'.repeat(256);
    const dir = await SafeDir.open(msgDir, ['job']);
    try {
      await expect(dir.openFile(long)).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
    } finally {
      await dir.close();
    }
    await expect(openBeneath(msgDir, [long, 'x.log'], 'Log file x.log')).rejects.toMatchObject({ code: 'ENAMETOOLONG' });
  });

  it('a base whose path runs through a link loop (ELOOP) is plain not-found', async () => {
    await fs.symlink('loop', path.join(root, 'loop'));
    expect(await textOf(openBeneath(path.join(root, 'loop', 'msg'), ['job', 'x.log'], 'Log file x.log'))).toBe('Log file x.log not found');
  });
});

describe('openBeneath parts', () => {
  it('every part but the last is a directory, however many there are', async () => {
    await fs.mkdir(path.join(msgDir, 'job', 'sub'));
    await fs.writeFile(path.join(msgDir, 'job', 'sub', 'deep.log'), 'deep');
    await fs.writeFile(log('deep.log'), 'shallow');
    await fs.writeFile(path.join(msgDir, 'top'), 'top');
    const read = async (parts: string[]) => {
      const { fh } = await openBeneath(msgDir, parts, parts.join('/'));
      try {
        return await fh.readFile('utf8');
      } finally {
        await fh.close();
      }
    };
    expect(await read(['job', 'sub', 'deep.log'])).toBe('deep');
    expect(await read(['top'])).toBe('top');
  });
});

describe('handles are closed on every path', () => {
  it('openBeneath keeps only the file it returns, and nothing when it refuses', async () => {
    await fs.writeFile(log('x.log'), 'x');
    const before = openFds();
    const { fh } = await openBeneath(msgDir, ['job', 'x.log'], 'x.log');
    expect(openFds()).toBe(before + 1);
    await fh.close();
    await textOf(openBeneath(msgDir, ['job', 'none.log'], 'none.log'));
    expect(openFds()).toBe(before);
  });

  it('readMessageFile and readMessageFileSync close what they opened, read or refused', async () => {
    await fs.writeFile(path.join(msgDir, 'status'), 'ok');
    await fs.writeFile(path.join(msgDir, 'msg'), 'x'.repeat(20));
    const before = openFds();
    expect(await readMessageFile(msgDir, 'status')).toBe('ok');
    await textOf(readMessageFile(msgDir, 'msg', 19));
    expect(readMessageFileSync(path.join(msgDir, 'status'))).toBe('ok');
    expect(() => readMessageFileSync(path.join(msgDir, 'msg'), 19)).toThrow(/more than the 19/);
    expect(() => readMessageFileSync(path.join(msgDir, 'job'))).toThrow(/a directory/);
    expect(openFds()).toBe(before);
  });
});

describe('kindOf', () => {
  it('a type none of the tests names is "other", never a device', async () => {
    const st = await fs.lstat(msgDir, { bigint: true });
    st.mode = 0n; // no type bits: what no Linux file has, and what a classifier must not call a device
    expect(kindOf(st)).toBe('other');
  });
});
