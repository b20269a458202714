// A journal file's sync thread (src/spool/native/rq-journal-sync.c): order, batches that follow without the loop, errors in node's form.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
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

type Settled = [upto: number, code?: string, message?: string, syscall?: string];

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

it('a record appended while a batch syncs is written by the thread the moment that sync ends: the loop need not run again', async () => {
  const j = open();
  // A batch big enough that its fdatasync takes a while: its write is seen whole before that sync can end.
  const big = `{"a":"${'x'.repeat(16 << 20)}"}\n`;
  j.thread.append(big);
  j.thread.kick();
  const until = Date.now() + 20_000;
  while (fs.statSync(file).size < big.length && Date.now() < until);
  // No kick for the second, and the loop is held here until it is in the file: only the thread can write it.
  j.thread.append('{"b":2}\n');
  while (fs.statSync(file).size < big.length + 8 && Date.now() < until);
  expect(fs.statSync(file).size).toBe(big.length + 8);
  await j.upTo(2);
  await j.close();
  expect(fs.readFileSync(file, 'utf8').endsWith('x"}\n{"b":2}\n')).toBe(true);
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
  expect(j.settled).toEqual([[1, 'EBADF', `EBADF: bad file descriptor, write '${file}'`, 'write']]);
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
