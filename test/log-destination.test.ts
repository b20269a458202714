// Logging on a full disk and through failing writes: lines are dropped and counted, never thrown, and one warning says how many once writing works again.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DestinationFs, LogDestination } from '../src/log-destination.js';
import { createLogger } from '../src/log.js';
import { waitFor } from './helpers/rq-root.js';

const run = promisify(execFile);
let dir: string;
let mounted = '';
let mountError = '';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-logdest-'));
  const mnt = path.join(dir, 'mnt');
  fs.mkdirSync(mnt);
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'rq-log-full', mnt]);
    mounted = mnt;
  } catch (err) {
    mountError = (err as Error).message;
  }
});
afterAll(async () => {
  if (mounted) await run('umount', ['-l', mounted]);
  fs.rmSync(dir, { recursive: true, force: true });
});

type Line = { msg: string; dropped?: number; level: number };

/** The file's lines; a write cut short by the full disk leaves at most one torn line, which the next write ends. */
function lines(file: string): Line[] {
  const out: Line[] = [];
  let torn = 0;
  for (const l of fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    try {
      out.push(JSON.parse(l));
    } catch {
      torn += 1;
    }
  }
  expect(torn).toBeLessThanOrEqual(1);
  return out;
}

describe('a logger on a full disk', () => {
  it('keeps logging, drops what it cannot write, then warns once with the count', async (ctx) => {
    if (!mounted) ctx.skip(`cannot mount a tmpfs here (${mountError}); the injected-error test below covers the same path`);
    const file = path.join(mounted, 'log', 'daemon.log');
    const log = createLogger({ name: 'full', file });
    log.info('before');
    await waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('before'), 'the first line');
    const filler = path.join(mounted, 'filler');
    await run('dd', ['if=/dev/zero', `of=${filler}`, 'bs=4k']).catch(() => undefined);
    for (let i = 0; i < 200; i++) log.info({ i, pad: 'x'.repeat(100) }, 'while full');
    // Every line has been tried, and those that found no room counted: nothing is pending any more.
    const dest = (log as unknown as Record<symbol, LogDestination>)[pino.symbols.streamSym];
    await waitFor(() => dest.droppedLines > 0 && dest.idle, 'the writes to fail');
    fs.rmSync(filler);
    log.info('after');
    const isWarning = (l: Line) => /^log writes failed: \d+ lines dropped$/.test(l.msg);
    await waitFor(() => lines(file).some(isWarning), 'the warning once space returned');
    log.info('marker');
    await waitFor(() => lines(file).some((l) => l.msg === 'marker'), 'a line after the warning');
    expect(
      lines(file)
        .map((l) => l.msg)
        .slice(-3),
    ).toEqual(['after', expect.stringMatching(/^log writes failed/), 'marker']);
    const warned = lines(file).filter(isWarning);
    expect(warned).toHaveLength(1);
    expect(warned[0].level).toBe(40);
    expect(warned[0].dropped).toBeGreaterThan(0);
    expect(lines(file).filter((l) => l.msg === 'while full').length + warned[0].dropped!).toBe(200);
  });
});

describe('LogDestination with injected write errors', () => {
  it('counts the lines of each failed write, never throws, and reports them with the first good write', async () => {
    let fail: string | null = 'ENOSPC';
    const written: string[] = [];
    const wfs: DestinationFs = {
      write: (_fd, data, cb) =>
        setImmediate(() => (fail ? cb(Object.assign(new Error(fail), { code: fail }), 0) : (written.push(data.toString()), cb(null, data.length)))),
      writeSync: (_fd, data) => (written.push(data), data.length),
    };
    const dest = new LogDestination(99, wfs);
    const reports: number[] = [];
    dest.recovered = (n) => reports.push(n);
    for (const code of ['ENOSPC', 'EIO', 'EPIPE']) {
      fail = code;
      dest.write(`${code} line\n`);
      await waitFor(() => !written.length && dest.droppedLines > 0 && dest.idle, `${code} to be dropped`);
    }
    expect(dest.droppedLines).toBe(3);
    fail = null;
    dest.write('ok\n');
    await waitFor(() => written.includes('ok\n'), 'the good write');
    expect(reports).toEqual([3]);
    dest.write('later\n');
    await waitFor(() => written.includes('later\n'), 'a second good write');
    expect(reports).toEqual([3]);
  });

  it('writes the rest of a short write', async () => {
    const written: string[] = [];
    const wfs: DestinationFs = {
      write: (_fd, data, cb) => setImmediate(() => (written.push(data.subarray(0, 3).toString()), cb(null, Math.min(3, data.length)))),
      writeSync: (_fd, data) => data.length,
    };
    const dest = new LogDestination(99, wfs);
    dest.write('abcdefgh\n');
    await waitFor(() => written.join('') === 'abcdefgh\n', 'every byte');
  });

  it('flush waits for the write in flight, then writes what is pending after it, in order', async () => {
    const written: string[] = [];
    let land: (() => void) | null = null;
    const wfs: DestinationFs = {
      write: (_fd, data, cb) => (land = () => (written.push(data.toString()), cb(null, data.length))),
      writeSync: (_fd, data) => (written.push(data), data.length),
    };
    const dest = new LogDestination(99, wfs);
    dest.write('in flight\n');
    dest.write('pending\n');
    let flushed = false;
    dest.flush(() => (flushed = true));
    expect(flushed).toBe(false);
    expect(written).toEqual([]);
    land!();
    expect(written).toEqual(['in flight\n', 'pending\n']);
    expect(flushed).toBe(true);
    expect(dest.idle).toBe(true);
  });

  it('flush with nothing in flight writes at once', () => {
    const written: string[] = [];
    const dest = new LogDestination(99, { write: () => undefined, writeSync: (_fd, data) => (written.push(data), data.length) });
    let flushed = false;
    dest.flush(() => (flushed = true));
    expect(flushed).toBe(true);
    expect(written).toEqual([]);
  });
});
