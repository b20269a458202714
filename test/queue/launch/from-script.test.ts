// rq's end of fd 3 read by the native spawner's poll: chunks in order, one end, the fd closed once, a flat-out writer read a chunk per turn of the loop.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FromScript, pipeFromScript, streamFromScript } from '../../../src/queue/launch/from-script.js';
import { ADDON_PATH } from '../../../src/queue/launch/native-launcher.js';
import { addon as loaded, addonError } from './launcher-harness.js';
import { isOpen } from '../../helpers/open-under.js';

const addon = () => {
  if (!loaded) throw new Error(`native addon did not load: ${(addonError as Error)?.message}`);
  return loaded;
};

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-from-script-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Reads `from` to its end: the chunks, how many times onEnd came, and a promise of the end. */
function reading(from: FromScript) {
  const chunks: Buffer[] = [];
  let ends = 0;
  const ended = new Promise<void>((resolve) =>
    from.read(
      (chunk) => chunks.push(chunk),
      () => {
        ends++;
        resolve();
      },
    ),
  );
  return { chunks, ends: () => ends, ended, text: () => Buffer.concat(chunks).toString() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Counts turns of the event loop (its check phase) until stopped. */
function turnCounter() {
  let turns = 0;
  let ticking = true;
  const tick = () => {
    turns++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    now: () => turns,
    stop: () => (ticking = false),
  };
}

/** A pipe whose read end is a pipeFromScript. */
function pipe() {
  const [readFd, writeFd] = addon().pipe();
  return { readFd, writeFd, from: pipeFromScript(readFd, addon()) };
}

describe('pipeFromScript', () => {
  it('hands over what is written, in order, then ends once at EOF and closes its fd', async () => {
    const { readFd, writeFd, from } = pipe();
    const r = reading(from);
    fs.writeSync(writeFd, 'one\n');
    while (r.chunks.length === 0) await turn();
    fs.writeSync(writeFd, 'two\nthr');
    fs.closeSync(writeFd);
    await r.ended;
    expect(r.text()).toBe('one\ntwo\nthr');
    expect(r.ends()).toBe(1);
    expect(isOpen(readFd)).toBe(false);
  });

  it('reads a full pipe one chunk of at most 64 KiB per turn of the loop, so a script writing flat out leaves other work its turns', async () => {
    const { writeFd, from } = pipe();
    // A 1 MiB pipe filled before reading starts: reading until EAGAIN would take it all in one turn.
    const fill = 'import fcntl, os; fcntl.fcntl(1, fcntl.F_SETPIPE_SZ, 1 << 20); os.write(1, bytes(1 << 20))';
    expect(spawnSync('python3', ['-c', fill], { stdio: ['ignore', writeFd, 'inherit'] }).status).toBe(0);
    fs.closeSync(writeFd);
    const turns = turnCounter();
    const turnAt: number[] = [];
    const sizes: number[] = [];
    await new Promise<void>((resolve) =>
      from.read((chunk) => {
        turnAt.push(turns.now());
        sizes.push(chunk.length);
      }, resolve),
    );
    turns.stop();
    expect(sizes).toEqual(Array(16).fill(65_536));
    for (let i = 1; i < turnAt.length; i++) expect(turnAt[i]).toBeGreaterThan(turnAt[i - 1]);
  });

  it('stops on destroy: no chunk after it, one end, its fd closed, and a writer still at it gets EPIPE', async () => {
    const { readFd, writeFd, from } = pipe();
    const writer = spawn('yes', [], { stdio: ['ignore', writeFd, 'inherit'] });
    fs.closeSync(writeFd);
    const r = reading(from);
    while (r.chunks.length === 0) await turn();
    from.destroy();
    const seen = r.chunks.length;
    const [, signal] = (await new Promise((resolve) => writer.once('exit', (...a) => resolve(a)))) as [number | null, string | null];
    expect(signal).toBe('SIGPIPE');
    expect(r.chunks.length).toBe(seen);
    expect(r.ends()).toBe(1);
    expect(isOpen(readFd)).toBe(false);
  });

  it('may be destroyed from inside its own chunk: nothing more is read, it ends once', async () => {
    const { readFd, writeFd, from } = pipe();
    let chunks = 0;
    let ends = 0;
    from.read(
      () => {
        chunks++;
        from.destroy();
      },
      () => ends++,
    );
    fs.writeSync(writeFd, 'a\n');
    while (chunks === 0) await turn();
    expect(isOpen(readFd)).toBe(false);
    expect(() => fs.writeSync(writeFd, 'b\n')).toThrow(/EPIPE/);
    for (let i = 0; i < 10; i++) await turn();
    expect([chunks, ends]).toEqual([1, 1]);
    fs.closeSync(writeFd);
  });

  it('closes its fd and ends once: destroyed before reading, or after its end, it leaves a file opened since under the same number alone, read or destroyed again', async () => {
    for (const when of ['before reading', 'after its end'] as const) {
      const { readFd, writeFd, from } = pipe();
      fs.closeSync(writeFd);
      const r = when === 'after its end' ? reading(from) : null;
      if (r) await r.ended;
      else from.destroy();
      expect(isOpen(readFd)).toBe(false);
      const reused = fs.openSync(path.join(dir, 'other'), 'w');
      try {
        expect(reused).toBe(readFd);
        from.destroy();
        expect(isOpen(reused)).toBe(true);
        expect(r?.ends()).toBe(r ? 1 : undefined);
        if (!r) {
          const late = reading(from);
          await late.ended;
          expect([late.chunks, late.ends(), isOpen(reused)]).toEqual([[], 1, true]);
        }
      } finally {
        fs.closeSync(reused);
      }
    }
  });

  it('reads an fd it cannot poll (a regular file) as an empty fd 3: it ends, and the fd is closed', async () => {
    const fd = fs.openSync(path.join(dir, 'plain'), 'w+');
    const r = reading(pipeFromScript(fd, addon()));
    await r.ended;
    expect(r.chunks).toEqual([]);
    expect(isOpen(fd)).toBe(false);
  });

  it('lets a throw in onData reach the process’s uncaughtException, as a throw in a stream’s listener does', () => {
    const script = `
      const addon = require(${JSON.stringify(ADDON_PATH)});
      process.on('uncaughtException', (err) => { console.log('uncaught: ' + err.message); process.exit(0); });
      const [r, w] = addon.pipe();
      addon.readPipe(r, () => { throw new Error('from onData'); });
      require('fs').writeSync(w, 'x');
      setTimeout(() => { console.log('swallowed'); process.exit(1); }, 5000);`;
    expect(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim()).toBe('uncaught: from onData');
  });
});

describe('streamFromScript', () => {
  it('ends once, whether the stream ends, closes or fails, or is destroyed by rq', async () => {
    for (const finish of [(s: PassThrough) => s.end(), (s: PassThrough) => s.destroy(), (s: PassThrough) => s.destroy(new Error('EIO'))]) {
      const s = new PassThrough();
      const r = reading(streamFromScript(s));
      s.write('a\n');
      finish(s);
      await r.ended;
      await turn();
      expect(r.ends()).toBe(1);
    }
    const s = new PassThrough();
    const from = streamFromScript(s);
    const r = reading(from);
    from.destroy();
    await r.ended;
    expect(s.destroyed).toBe(true);
  });

  it('pauses a stream for a turn of the loop once it has handed over 64 KiB', async () => {
    const s = new PassThrough({ highWaterMark: 1 << 20 });
    const turns = turnCounter();
    const turnAt: number[] = [];
    const from = streamFromScript(s);
    for (let i = 0; i < 8; i++) s.write(Buffer.alloc(32_768));
    s.end();
    await new Promise<void>((resolve) => from.read(() => turnAt.push(turns.now()), resolve));
    turns.stop();
    expect(turnAt).toHaveLength(8);
    // Two chunks of 32 KiB, then a turn.
    expect(turnAt.filter((t, i) => i > 0 && t > turnAt[i - 1])).toHaveLength(3);
  });
});
