// A message's history file (rq-beyond §B14): lines appended, read back with the implied create entry, rotated past 1 MiB, never thrown.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RqError } from '../../src/errors.js';
import { HISTORY_ROTATE_BYTES, appendHistory, readHistory } from '../../src/spool/history.js';
import { ioError, noSpace } from '../helpers/no-space-fs.js';
import { openUnder } from '../helpers/open-under.js';
import { perTestSpool } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);

const s = perTestSpool('test', T0);

const noFailure = (err: RqError) => {
  throw err;
};

/** The spool's fs with `call` failing as a disk would (noSpace, ioError). */
const refusing = (call: 'openSync' | 'writeFileSync', fault: () => Error) => ({
  ...s.spool.fs,
  [call]: () => {
    throw fault();
  },
});

describe('history', () => {
  it('history: one JSON line per entry, appended, with the create entry implied by the id', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: false });
    s.clock = T0 + 5;
    await s.spool.commit(id);
    const dir = s.spool.msgDir('que', id);
    s.clock = T0 + 9;
    await s.spool.appendHistory(dir, { from: 'que', to: 'que', actor: 'operator', reason: 'run now' });
    const lines = (await fs.readFile(path.join(dir, 'history'), 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    expect(JSON.parse(lines[0])).toEqual({ at: new Date(T0 + 5).toISOString(), from: 'prep', to: 'que', actor: 'commit' });
    expect(JSON.parse(lines[1])).toEqual({ at: new Date(T0 + 9).toISOString(), from: 'que', to: 'que', actor: 'operator', reason: 'run now' });
    expect(await s.spool.readHistory('que', id)).toEqual([
      { at: new Date(T0).toISOString(), from: null, to: 'prep', actor: 'create' },
      { at: new Date(T0 + 5).toISOString(), from: 'prep', to: 'que', actor: 'commit' },
      { at: new Date(T0 + 9).toISOString(), from: 'que', to: 'que', actor: 'operator', reason: 'run now' },
    ]);
    // A line torn by a crash mid-append is skipped, the rest is kept.
    await fs.appendFile(path.join(dir, 'history'), '{"at":"2026-');
    expect(await s.spool.readHistory('que', id)).toHaveLength(3);
    // An explicit create line (older files) is not doubled.
    await fs.writeFile(path.join(dir, 'history'), JSON.stringify({ at: 'x', from: null, to: 'que', actor: 'create' }) + '\n');
    expect(await s.spool.readHistory('que', id)).toEqual([{ at: 'x', from: null, to: 'que', actor: 'create' }]);
    expect(await s.spool.readHistory('que', '20261121.1643.46.613.1')).toEqual([]);
    expect(await s.spool.readHistory('done', 'garbage')).toEqual([]);
  });

  it('history: past the size limit the file becomes history.1 (one generation kept), read back oldest first', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    const line = (n: number) => ({ event: 'beat', actor: 'test', n });
    const bytes = (JSON.stringify({ at: new Date(T0).toISOString(), ...line(0) }) + '\n').length;
    // Room for three lines per file: lines 0-2, then 3-5, then 6.
    for (let n = 0; n < 7; n++) appendHistory(s.spool.fs, dir, T0, line(n), noFailure, bytes * 3);
    const ns = async (f: string) =>
      (await fs.readFile(path.join(dir, f), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).n);
    expect(await ns('history.1')).toEqual([3, 4, 5]);
    expect(await ns('history')).toEqual([6]);
    expect((await s.spool.readHistory('que', id)).map((e) => e.n ?? e.actor)).toEqual(['create', 3, 4, 5, 6]);
    expect(HISTORY_ROTATE_BYTES).toBe(1024 * 1024);
  });

  it('a line that cannot be written is reported, not thrown; a message that moved on misses it silently', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    // The open fails as a broken disk's would.
    const eio = refusing('openSync', ioError);
    const failures: RqError[] = [];
    appendHistory(eio, dir, T0, { event: 'beat', actor: 'test' }, (err) => failures.push(err));
    expect(failures.map((e) => [e.code, e.message])).toEqual([['RQ_ERR_DISK', expect.stringMatching(/^history line in .* failed: EIO/)]]);
    appendHistory(s.spool.fs, path.join(dir, 'gone'), T0, { event: 'beat', actor: 'test' }, (err) => failures.push(err));
    expect(failures).toHaveLength(1);
  });

  it('a line the disk refuses halfway costs that line only: its written part is cut off, the lines before and after are read', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    appendHistory(s.spool.fs, dir, T0, { event: 'one', actor: 'test' }, noFailure);
    // A disk that fills midway: part of the line goes in, then ENOSPC.
    const filling = {
      ...s.spool.fs,
      writeFileSync: (fd: number, data: string) => {
        s.spool.fs.writeFileSync(fd, data.slice(0, 10));
        throw noSpace();
      },
    };
    const failures: RqError[] = [];
    appendHistory(filling, dir, T0, { event: 'lost', actor: 'test' }, (err) => failures.push(err));
    expect(failures.map((e) => e.message)).toEqual([expect.stringMatching(/ENOSPC/)]);
    appendHistory(s.spool.fs, dir, T0, { event: 'two', actor: 'test' }, noFailure);
    expect((await s.spool.readHistory('que', id)).map((e) => e.event ?? e.actor)).toEqual(['create', 'one', 'two']);
    expect(
      (await fs.readFile(path.join(dir, 'history'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).event),
    ).toEqual(['one', 'two']);
  });

  it('reads a message without a history file as its implied create, and one whose directory is gone as none', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    await fs.rm(path.join(dir, 'history'), { force: true });
    expect(await readHistory(dir, id, 'que')).toEqual([{ at: new Date(T0).toISOString(), from: null, to: 'que', actor: 'create' }]);
    expect(await readHistory(path.join(dir, 'gone'), id, 'que')).toBeNull();
  });

  it('leaves no descriptor open: not after a line, a rotation, nor a line the disk refuses', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    const full = refusing('writeFileSync', noSpace);
    appendHistory(s.spool.fs, dir, T0, { event: 'one', actor: 'test' }, noFailure);
    appendHistory(s.spool.fs, dir, T0, { event: 'rotated', actor: 'test' }, noFailure, 1);
    appendHistory(full, dir, T0, { event: 'lost', actor: 'test' }, () => undefined);
    // Only the message's own files: the spool's blanks and journal open theirs meanwhile.
    expect(await openUnder(dir)).toEqual([]);
    expect(await fs.readFile(path.join(dir, 'history.1'), 'utf8')).toContain('"event":"one"');
  });

  it.each([
    ['a directory', (p: string) => fs.mkdir(p)],
    ['a FIFO', async (p: string) => execFileSync('mkfifo', [p])],
    ['a link to a file elsewhere', (p: string, outside: string) => fs.symlink(outside, p)],
  ])('%s a script left in place of history is replaced, and the line written; nothing elsewhere changes', async (_what, plant) => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const outside = path.join(s.spool.root, 'outside.txt');
    const dir = s.spool.msgDir('que', id);
    await fs.writeFile(outside, 'untouched');
    await fs.rm(path.join(dir, 'history'), { force: true });
    await plant(path.join(dir, 'history'), outside);
    appendHistory(s.spool.fs, dir, T0, { event: 'beat', actor: 'test' }, noFailure);
    expect((await fs.lstat(path.join(dir, 'history'))).isFile()).toBe(true);
    expect(await fs.readFile(path.join(dir, 'history'), 'utf8')).toContain('"event":"beat"');
    expect(await fs.readFile(outside, 'utf8')).toBe('untouched');
  });

  it('the implied create entry goes where the first move left from, even after events without a move', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    appendHistory(s.spool.fs, dir, T0 + 1, { event: 'reschedule', actor: 'test', due: 1 }, noFailure);
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher' });
    await s.spool.move(id, 'run', 'done', { actor: 'script' });
    expect((await s.spool.readHistory('done', id)).map((e) => e.event ?? `${e.from}→${e.to}`)).toEqual(['null→que', 'reschedule', 'que→run', 'run→done']);
  });

  it('a torn last line of history.1 does not swallow the first line of history', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const dir = s.spool.msgDir('que', id);
    await fs.writeFile(path.join(dir, 'history.1'), JSON.stringify({ at: 'a', event: 'one' }) + '\n{"at":"2026-');
    await fs.writeFile(path.join(dir, 'history'), JSON.stringify({ at: 'b', event: 'two' }) + '\n');
    expect((await s.spool.readHistory('que', id)).map((e) => e.event ?? e.actor)).toEqual(['create', 'one', 'two']);
  });
});
