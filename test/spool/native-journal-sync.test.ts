// A journal file's sync thread (src/spool/native/rq-journal-sync.c): order, batches that follow without the loop, errors in node's form.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type JournalSyncThread, nodeSpoolFs } from '../../src/spool/spool-fs.js';

const { journalSync } = nodeSpoolFs;
const addon = path.resolve('build', 'Release', 'rq_journal_sync.node');
let dir: string;
let file: string;
beforeEach(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-journal-sync-'));
  file = path.join(dir, 'journal');
});
afterEach(() => fsp.rm(dir, { recursive: true, force: true }));

type Settled = [upto: number, code?: string, message?: string, syscall?: string, errno?: number];

/** The LD_PRELOAD shim (test/fixtures/native/sync-faults.c) that fails or holds a process's n-th fdatasync and ftruncate. */
let faults: string;
beforeAll(async () => {
  faults = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-sync-faults-')), 'sync-faults.so');
  execFileSync('cc', ['-shared', '-fPIC', '-O2', '-o', faults, path.resolve('test', 'fixtures', 'native', 'sync-faults.c'), '-ldl']);
  return () => fsp.rm(path.dirname(faults), { recursive: true, force: true });
});

/**
 * Runs `body` in a node process of its own under the shim, with `t` a JournalSync on `file` (opened for append) whose
 * reports it prints as JSON lines, `appendKick(text)` and `settled(n)` (a promise); `env` sets the shim's faults.
 */
function child(body: string, env: Record<string, string>): { out: Settled[]; status: number | null } {
  const script = `
    const fs = require('fs');
    const { JournalSync } = require(${JSON.stringify(addon)});
    const file = ${JSON.stringify(file)};
    const fd = fs.openSync(file, 'a');
    const waiters = [];
    let last = 0;
    const t = new JournalSync(file, fd, fs.fstatSync(fd).size, (...s) => {
      process.stdout.write(JSON.stringify(s) + '\\n');
      last = s[0];
      waiters.splice(0).forEach((w) => w());
    });
    const appendKick = (text) => (t.append(text), t.kick());
    const settled = async (n) => { while (last < n) await new Promise((r) => waiters.push(r)); };
    (async () => { ${body} })();
  `;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, LD_PRELOAD: faults, ...env } });
  const out = run.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as (number | string | null)[]).map((v) => v ?? undefined) as Settled);
  if (run.status !== 0) console.error(run.stderr);
  return { out, status: run.status };
}

/** A sync thread on `file` opened with `flags`; `settled` lists its reports, `next(n)` resolves once the n-th is in. */
function open(flags = 'a') {
  const fd = fs.openSync(file, flags);
  const settled: Settled[] = [];
  const waiting: (() => void)[] = [];
  const thread: JournalSyncThread = journalSync!(file, fd, fs.fstatSync(fd).size, (...s) => {
    settled.push(s);
    waiting.splice(0).forEach((w) => w());
  });
  const upTo = async (seq: number) => {
    while (!settled.some(([upto]) => upto >= seq)) await new Promise<void>((r) => waiting.push(r));
  };
  return { thread, settled, upTo, close: () => thread.close().finally(() => fs.closeSync(fd)) };
}

it('the addon is built: the journals take this path', () => {
  expect(typeof journalSync).toBe('function');
});

it('records are numbered and written in order after what the file holds, in UTF-8; each report covers every record up to its number', async () => {
  fs.writeFileSync(file, 'first\n');
  const j = open();
  expect([j.thread.append('zwei ü\n'), j.thread.append('drei\n')]).toEqual([1, 2]);
  j.thread.kick();
  await j.upTo(2);
  expect(j.thread.append('')).toBe(3);
  j.thread.kick();
  await j.close();
  expect(fs.readFileSync(file, 'utf8')).toBe('first\nzwei ü\ndrei\n');
  expect(j.settled.map(([upto, code]) => [upto, code])).toEqual(j.settled.map(([upto]) => [upto, undefined]));
  expect(j.settled.map(([upto]) => upto)).toEqual([...new Set(j.settled.map(([upto]) => upto))].sort((a, b) => a - b));
  expect(j.settled.at(-1)![0]).toBe(3);
});

it('a record appended while a batch syncs is written by the thread the moment that sync ends: the loop need not run again', () => {
  const hold = path.join(dir, 'hold');
  fs.mkdirSync(hold);
  const { out, status } = child(
    `
    appendKick('{"a":1}\\n');
    while (!fs.existsSync(${JSON.stringify(hold)} + '/entered'));
    // No kick for the second, and the loop is held here until it is in the file: only the thread can write it.
    t.append('{"b":2}\\n');
    fs.writeFileSync(${JSON.stringify(hold)} + '/go', '');
    while (fs.readFileSync(file, 'utf8') !== '{"a":1}\\n{"b":2}\\n');
    await settled(2);
    await t.close();
  `,
    { RQ_HOLD_FDATASYNC: '1', RQ_HOLD_DIR: hold },
  );
  expect(status).toBe(0);
  expect(out.map(([upto, code]) => [upto, code])).toEqual([
    [1, undefined],
    [2, undefined],
  ]);
});

it('a failed batch is cut away; while the cut fails each next batch is refused unwritten; what follows counts from the true length', () => {
  fs.writeFileSync(file, 'kept\n');
  // fdatasync 1 (a1) fails and so does its cut; b2's retry of the cut fails; c3's succeeds (ftruncate 3, fdatasync 2),
  // c3 (3) and d4 (4) are synced; e5's fdatasync (5) fails and it is cut back to the end of d4.
  const { out, status } = child(
    `for (const [n, r] of ['a1', 'b2', 'c3', 'd4', 'e5'].entries()) { appendKick(r + '\\n'); await settled(n + 1); }
    await t.close();`,
    { RQ_FAIL_FDATASYNC: '1,5', RQ_FAIL_FTRUNCATE: '1,2' },
  );
  expect(status).toBe(0);
  const eio = (syscall: string) => ['EIO', `EIO: i/o error, ${syscall} '${file}'`, syscall, -5];
  expect(out).toEqual([
    [1, ...eio('fdatasync')],
    [2, ...eio('ftruncate')],
    [3, undefined, undefined, undefined, undefined],
    [4, undefined, undefined, undefined, undefined],
    [5, ...eio('fdatasync')],
  ]);
  expect(fs.readFileSync(file, 'utf8')).toBe('kept\nc3\nd4\n');
});

it('close() holds its process until the thread has ended, though every record settled before', () => {
  // Each round: a record, then close() at once; a loop let go before the thread's end would exit with rounds left.
  const { status } = child(
    `for (let i = 0; i < 200; i++) {
      const f = fs.openSync(file + i, 'a');
      const s = new JournalSync(file + i, f, 0, () => undefined);
      s.append('{"a":1}\\n');
      s.kick();
      await s.close();
      fs.closeSync(f);
    }
    process.stdout.write(JSON.stringify([200]) + '\\n');
    await t.close();`,
    {},
  );
  expect(status).toBe(0);
});

it("a worker that ends while its journal's thread is inside a sync: the thread ends first, its record synced, and the process lives on", () => {
  for (let round = 0; round < 3; round++) {
    const hold = path.join(dir, `hold${round}`);
    const journal = path.join(dir, `journal${round}`);
    fs.mkdirSync(hold);
    const run = spawnSync(process.execPath, [path.resolve('test', 'fixtures', 'native', 'journal-worker-end.mjs'), addon, journal, hold], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, LD_PRELOAD: faults, RQ_HOLD_FDATASYNC: '1', RQ_HOLD_DIR: hold },
    });
    expect([run.status, run.signal, run.stdout]).toEqual([0, null, '{"a":1}\n']);
  }
});

it('close() settles every record first; what was appended without a kick still goes', async () => {
  const j = open();
  j.thread.append('{"a":1}\n');
  await j.close();
  expect(j.settled.map(([upto, code]) => [upto, code])).toEqual([[1, undefined]]);
  expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
});

it('a batch that cannot be written is reported failed, in the form of node fs errors, and counts for nothing', async () => {
  fs.writeFileSync(file, 'kept\n');
  const j = open('r');
  j.thread.append('more\n');
  j.thread.kick();
  await j.upTo(1);
  await j.close();
  expect(j.settled).toEqual([[1, 'EBADF', `EBADF: bad file descriptor, write '${file}'`, 'write', -9]]);
  expect(fs.readFileSync(file, 'utf8')).toBe('kept\n');
});

it('refuses arguments of the wrong kind, and appends after close, with its code', async () => {
  const fd = fs.openSync(file, 'a');
  try {
    for (const bad of [-1, NaN, 0.5, Infinity])
      expect(() => journalSync!(file, bad, 0, () => undefined), String(bad)).toThrow(expect.objectContaining({ code: 'RQ_ERR_FILEOPS' }));
    expect(() => journalSync!(file, fd, -1, () => undefined)).toThrow(expect.objectContaining({ code: 'RQ_ERR_FILEOPS' }));
    expect(() => journalSync!(file, fd, 0, 'no' as unknown as () => void)).toThrow(expect.objectContaining({ code: 'RQ_ERR_FILEOPS' }));
    const thread = journalSync!(file, fd, 0, () => undefined);
    expect(() => thread.append(7 as unknown as string)).toThrow(expect.objectContaining({ code: 'RQ_ERR_FILEOPS' }));
    await thread.close();
    expect(() => thread.append('late\n')).toThrow(expect.objectContaining({ code: 'RQ_ERR_FILEOPS' }));
  } finally {
    fs.closeSync(fd);
  }
});

it('keeps its process alive while a record is unsettled, and not once all are', () => {
  // Never closed: a process whose last record is durable ends by itself, and one that just appended waits for it.
  const script = `
    const fs = require('fs');
    const { JournalSync } = require(${JSON.stringify(addon)});
    const fd = fs.openSync(${JSON.stringify(file)}, 'a');
    const t = new JournalSync('journal', fd, 0, (upto) => process.stdout.write('settled ' + upto + '\\n'));
    t.append('{"a":1}\\n');
    t.kick();
  `;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  expect(out).toBe('settled 1\n');
  expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
});
