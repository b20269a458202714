// The order of writes, renames and fsyncs behind "OK means fsynced" (design.md §4), observed through a recording SpoolFs.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirSync, mkdirDurable, overwriteFile, renameDurable, writeFileDurable } from '../../src/spool/durable.js';
import type { SpoolFs } from '../../src/spool/spool-fs.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { type RecordingFs, recordingFs } from '../helpers/recording-fs.js';
import { HOST } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);

let root: string;
let rec: RecordingFs;
let spool: QueueSpool;
let clock: number;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-order-'));
  rec = recordingFs(root);
  clock = T0;
  spool = new QueueSpool(root, 'test', { host: HOST, now: () => clock, fs: rec.fs });
  await spool.ensureDirs();
  rec.clear();
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

const rel = (p: string) => path.relative(root, p);

/** Marks `resolved` in the log when `p` fulfils, so the answer is ordered against the disk calls. */
function resolved<T>(p: Promise<T>, line = 'resolved'): Promise<T> {
  return p.then((v) => {
    rec.mark(line);
    return v;
  });
}

/** Every line of `first` and of `then` is logged, and each of `first` before any of `then`. */
function expectOrder(log: string[], first: string[], then: string[]): void {
  const where = (l: string) => {
    const i = log.indexOf(l);
    expect(i, `"${l}" missing from\n${log.join('\n')}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  const lastFirst = Math.max(...first.map(where));
  const firstThen = Math.min(...then.map(where));
  expect(lastFirst, `[${first.join(', ')}] before [${then.join(', ')}] in\n${log.join('\n')}`).toBeLessThan(firstThen);
}

describe('create', () => {
  /** The one rename of a create: its private temp dir into the state dir. */
  function createRename(dir: string): { tmp: string; line: string } {
    const renames = rec.only('rename');
    expect(renames).toHaveLength(1);
    const tmp = /^rename (\S+) -> /.exec(renames[0])![1];
    expect(renames[0]).toBe(`rename ${tmp} -> ${dir}`);
    return { tmp, line: renames[0] };
  }

  it('into que/: msg written, dir renamed, then its journal record written and fsynced, and only then resolved; the message dir pays no fsync', async () => {
    const msg = await resolved(spool.create({ dest: 'test' }, { commit: true }));
    const dir = rel(spool.msgDir('que', msg.msg_id));
    const { tmp, line } = createRename(dir);
    const segment = rec.only('open').find((l) => l.startsWith('open queues/test/journal/'))!.slice('open '.length);
    expect(segment).toBe('queues/test/journal/000000000001.log');
    const log = rec.log;
    expectOrder(log, [`write ${tmp}/msg`], [line]);
    // The segment's name is durable in the journal dir before any record in it counts.
    expectOrder(log, [line, 'fsynced queues/test/journal'], [`write ${segment}`]);
    expectOrder(log, [`write ${segment}`], [`fsync ${segment}`]);
    expectOrder(log, [`fsynced ${segment}`], ['resolved']);
    expect(rec.only('fsync').filter((l) => l.startsWith(`fsync ${dir}`) || l === 'fsync queues/test/que')).toEqual([]);
    expect(await fs.readFile(path.join(root, segment), 'utf8')).toContain(`"id":"${msg.msg_id}"`);
  });

  it('a checkpoint syncs the filesystem, then deletes the segment; a later create starts the next one', async () => {
    const first = await spool.create({ dest: 'test' }, { commit: true });
    rec.clear();
    await resolved(spool.checkpoint());
    expect(rec.only('syncfs', 'syncfsed', 'rm', 'resolved')).toEqual(['syncfs queues/test/journal', 'syncfsed queues/test/journal', 'rm queues/test/journal/000000000001.log', 'resolved']);
    await spool.create({ dest: 'test' }, { commit: true });
    expect(await fs.readdir(spool.paths.journalDir)).toEqual(['000000000002.log']);
    expect(await spool.readMessage('que', first.msg_id)).toMatchObject({ msg_id: first.msg_id });
  });

  it('any directory fsync of the queue waits for a checkpoint first: nothing is made durable inside a message dir whose name is not', async () => {
    const msg = await spool.create({ dest: 'test' }, { commit: true });
    rec.clear();
    await resolved(spool.writeMessage('que', msg.msg_id, { ...msg, param1: 'changed' }));
    expectOrder(rec.log, ['syncfsed queues/test/journal'], [`fsync ${rel(spool.msgDir('que', msg.msg_id))}`]);
    expectOrder(rec.log, [`fsynced ${rel(spool.msgDir('que', msg.msg_id))}`], ['resolved']);
  });

  it.each([
    ['into prep/ (attachments follow)', {}, false, 'prep'],
    ['into que/ without a journal', { journal: false }, true, 'que'],
  ] as const)('%s: msg written, dir renamed, then msg, message dir and state dir fsynced, and only then resolved', async (_name, opts, commit, state) => {
    spool = new QueueSpool(root, 'test', { host: HOST, now: () => clock, fs: rec.fs, ...opts });
    rec.clear();
    const msg = await resolved(spool.create({ dest: 'test' }, { commit }));
    const dir = rel(spool.msgDir(state, msg.msg_id));
    const stateDir = rel(spool.paths.state[state]);
    const { tmp, line } = createRename(dir);
    const log = rec.log;
    expectOrder(log, [`write ${tmp}/msg`], [line]);
    // The descriptors followed the rename: these are the written file and the directory renamed.
    expectOrder(log, [line], [`fsync ${dir}/msg`, `fsync ${dir}`, `fsync ${stateDir}`]);
    // The name in the state dir is made durable only once what it names is.
    expectOrder(log, [`fsynced ${dir}/msg`, `fsynced ${dir}`], [`fsync ${stateDir}`]);
    expectOrder(log, [`fsynced ${dir}/msg`, `fsynced ${dir}`, `fsynced ${stateDir}`], ['resolved']);
    expect(rec.only('open').filter((l) => l.includes('journal/'))).toEqual([]);
  });
});

describe('file writes', () => {
  let base: string;
  beforeEach(async () => {
    base = path.join(root, 'files');
    await fs.mkdir(base);
    rec = recordingFs(base);
  });

  it('writeFileDurable: temp written, temp fsynced, renamed over the file, directory fsynced, resolved', async () => {
    await resolved(writeFileDurable(path.join(base, 'msg'), 'new text', new DirSync(rec.fs)));
    expect(rec.only('write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
      'write msg.tmp',
      'fsync msg.tmp',
      'fsynced msg.tmp',
      'rename msg.tmp -> msg',
      'fsync .',
      'fsynced .',
      'resolved',
    ]);
    expect(await fs.readFile(path.join(base, 'msg'), 'utf8')).toBe('new text');
  });

  it('overwriteFile, durable: an existing file is truncated, written and fsynced; its directory is not', async () => {
    await fs.writeFile(path.join(base, 'status'), 'a longer old text');
    await resolved(overwriteFile(path.join(base, 'status'), 'new', new DirSync(rec.fs)));
    expect(rec.only('truncate', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual(['truncate status', 'write status', 'fsync status', 'fsynced status', 'resolved']);
    expect(await fs.readFile(path.join(base, 'status'), 'utf8')).toBe('new');
  });

  it('overwriteFile, durable: a new file is written and fsynced, then its directory (the new name) is', async () => {
    await resolved(overwriteFile(path.join(base, 'status'), 'new', new DirSync(rec.fs)));
    expect(rec.only('truncate', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual(['write status', 'fsync status', 'fsynced status', 'fsync .', 'fsynced .', 'resolved']);
  });

  it('overwriteFile, not durable: written in place, no fsync at all', async () => {
    await overwriteFile(path.join(base, 'status'), 'first', undefined, rec.fs);
    await overwriteFile(path.join(base, 'status'), 'second', undefined, rec.fs);
    expect(rec.only('truncate', 'write', 'fsync')).toEqual(['write status', 'truncate status', 'write status']);
    expect(await fs.readFile(path.join(base, 'status'), 'utf8')).toBe('second');
  });

  it('renameDurable fsyncs both parents after the rename, or the one parent of a rename in place', async () => {
    await fs.mkdir(path.join(base, 'a'));
    await fs.mkdir(path.join(base, 'b'));
    await fs.writeFile(path.join(base, 'a', 'x'), '');
    await resolved(renameDurable(path.join(base, 'a', 'x'), path.join(base, 'b', 'x'), new DirSync(rec.fs)));
    const across = rec.only('rename', 'fsynced', 'resolved');
    expect(across[0]).toBe('rename a/x -> b/x');
    expect(across.slice(1, 3).sort()).toEqual(['fsynced a', 'fsynced b']);
    expect(across[3]).toBe('resolved');
    rec.clear();
    await resolved(renameDurable(path.join(base, 'b', 'x'), path.join(base, 'b', 'y'), new DirSync(rec.fs)));
    expect(rec.only('rename', 'fsynced', 'resolved')).toEqual(['rename b/x -> b/y', 'fsynced b', 'resolved']);
  });

  it('mkdirDurable fsyncs the parent of each level it made, and nothing for a directory that exists', async () => {
    await mkdirDurable(path.join(base, 'd1', 'd2', 'd3'), new DirSync(rec.fs));
    expect(rec.only('fsynced').sort()).toEqual(['fsynced .', 'fsynced d1', 'fsynced d1/d2']);
    rec.clear();
    await mkdirDurable(path.join(base, 'd1', 'd2'), new DirSync(rec.fs));
    await mkdirDurable(path.join(base, 'd1', 'd2', 'd4'), new DirSync(rec.fs));
    expect(rec.only('fsynced')).toEqual(['fsynced d1/d2']);
  });
});

describe('moves and hash dirs', () => {
  it('move: one rename, then source and target dirs fsynced before it resolves', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    rec.clear();
    await resolved(spool.move(id, 'que', 'err', { actor: 'test' }));
    const [que, err] = [rel(spool.paths.state.que), rel(spool.paths.state.err)];
    const rename = `rename ${que}/${id} -> ${err}/${id}`;
    expect(rec.only('rename')).toEqual([rename]);
    expectOrder(rec.log, [rename], [`fsync ${que}`, `fsync ${err}`]);
    expectOrder(rec.log, [`fsynced ${que}`, `fsynced ${err}`], ['resolved']);
  });

  it('move with durable: false renames and fsyncs nothing', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    rec.clear();
    await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect(rec.only('rename', 'fsync')).toEqual([`rename ${rel(spool.paths.state.que)}/${id} -> ${rel(spool.paths.state.run)}/${id}`]);
  });

  it('a move into a new hash dir fsyncs the parent of each new level before the rename, then que/ and the minute dir', async () => {
    const done = rel(spool.paths.state.done);
    const day = `${done}/20261121`;
    const minute = `${day}/16/43`;
    const { msg_id: a } = await spool.create({ dest: 'test' }, { commit: true });
    clock += 60_000;
    const { msg_id: b } = await spool.create({ dest: 'test' }, { commit: true });
    const { msg_id: c } = await spool.create({ dest: 'test' }, { commit: true });
    const que = rel(spool.paths.state.que);

    rec.clear();
    await resolved(spool.move(a, 'que', 'done', { actor: 'test' }));
    const rename = `rename ${que}/${a} -> ${minute}/${a}`;
    const levels = [`fsync ${done}`, `fsync ${day}`, `fsync ${day}/16`];
    expect(rec.only('mkdir')).toEqual([`mkdir ${minute}`]);
    expect(rec.only('fsync').slice(0, 3).sort()).toEqual(levels.sort());
    expectOrder(rec.log, [`mkdir ${minute}`], levels);
    expectOrder(rec.log, levels.map((l) => l.replace('fsync', 'fsynced')), [rename]);
    expectOrder(rec.log, [rename], [`fsync ${que}`, `fsync ${minute}`]);
    expectOrder(rec.log, [`fsynced ${que}`, `fsynced ${minute}`], ['resolved']);
    expect(rec.only('fsync')).toHaveLength(5);

    // A new minute in an existing hour: only the hour, the new level's parent, is fsynced for it.
    rec.clear();
    await resolved(spool.move(b, 'que', 'done', { actor: 'test' }));
    expect(rec.only('mkdir')).toEqual([`mkdir ${day}/16/44`]);
    expectOrder(rec.log, [`mkdir ${day}/16/44`], [`fsync ${day}/16`]);
    expectOrder(rec.log, [`fsynced ${day}/16`], [`rename ${que}/${b} -> ${day}/16/44/${b}`]);
    expect(rec.only('fsync').sort()).toEqual([`fsync ${day}/16`, `fsync ${day}/16/44`, `fsync ${que}`].sort());

    // An existing minute: no levels made, none fsynced.
    rec.clear();
    await spool.move(c, 'que', 'done', { actor: 'test' });
    expect(rec.only('mkdir')).toEqual([]);
    expect(rec.only('fsync').sort()).toEqual([`fsync ${day}/16/44`, `fsync ${que}`].sort());
  });
});

describe('attachments', () => {
  const exdev = () => Promise.reject(Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' }));

  it.each([
    ['hard link', 'link', (f: SpoolFs) => f],
    ['copy across filesystems', 'write', (f: SpoolFs): SpoolFs => ({ ...f, link: exdev })],
  ])('attach (%s): data stored under a temp name, fsynced, renamed, attach/ fsynced, resolved', async (_how, stored, fsOf) => {
    const src = path.join(root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: false });
    const attaching = new QueueSpool(root, 'test', { host: HOST, fs: fsOf(rec.fs) });
    rec.clear();
    await resolved(attaching.attach(id, src, 'data.bin'));
    const msgDir = rel(spool.msgDir('prep', id));
    const tmp = `${msgDir}/attach/.data.bin.tmp`;
    expect(rec.only('link', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
      // attach/ is new: its name in the message dir made durable first.
      `fsync ${msgDir}`,
      `fsynced ${msgDir}`,
      `${stored} ${tmp}`,
      `fsync ${tmp}`,
      `fsynced ${tmp}`,
      `rename ${tmp} -> ${msgDir}/attach/data.bin`,
      // Its md5, kept beside it so no view reads it again; the one attach/ fsync covers both names.
      `write ${msgDir}/attach/.data.bin.md5.tmp`,
      `fsync ${msgDir}/attach/.data.bin.md5.tmp`,
      `fsynced ${msgDir}/attach/.data.bin.md5.tmp`,
      `rename ${msgDir}/attach/.data.bin.md5.tmp -> ${msgDir}/attach/.data.bin.md5`,
      `fsync ${msgDir}/attach`,
      `fsynced ${msgDir}/attach`,
      'resolved',
    ]);
    expect(await fs.readFile(path.join(root, msgDir, 'attach', 'data.bin'), 'utf8')).toBe('attachment bytes');
  });

  it('clone: attachments linked and attach/ fsynced before the message is renamed into que/', async () => {
    const src = path.join(root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const { msg_id: orig } = await spool.create({ dest: 'test' }, { commit: false });
    await spool.attach(orig, src, 'one.bin');
    rec.clear();
    const clone = await resolved(spool.createWithAttachments({ dest: 'test' }, spool.msgDir('prep', orig)));
    const prepDir = rel(spool.msgDir('prep', clone.msg_id));
    const rename = `rename ${prepDir} -> ${rel(spool.msgDir('que', clone.msg_id))}`;
    expectOrder(rec.log, [`link ${prepDir}/attach/one.bin`], [`fsync ${prepDir}/attach`]);
    expectOrder(rec.log, [`fsynced ${prepDir}/attach`], [rename]);
    expectOrder(rec.log, [rename], [`fsync ${rel(spool.paths.state.que)}`]);
    expectOrder(rec.log, [`fsynced ${rel(spool.paths.state.que)}`], ['resolved']);
  });
});
