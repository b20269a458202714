// The order of file writes behind "OK means fsynced" (design.md §4), observed through a recording SpoolFs: the durable write helpers and a message's attachments.
import fs from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { DirSync, mkdirDurable, overwriteFile, renameDurable, writeFileDurable } from '../../src/spool/durable.js';
import { createCopy } from '../../src/spool/message-copy.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import type { SpoolFs } from '../../src/spool/spool-fs.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST } from '../helpers/temp-spool.js';
import { expectOrder, orderSpool } from './durability-order-harness.js';

const s = orderSpool();
const { rel, resolved } = s;

describe('file writes', () => {
  let base: string;
  beforeEach(async () => {
    base = path.join(s.root, 'files');
    await fs.mkdir(base);
    s.rec = recordingFs(base);
  });

  it('writeFileDurable: temp written, temp fsynced, renamed over the file, directory fsynced, resolved', async () => {
    await resolved(writeFileDurable(path.join(base, 'msg'), 'new text', new DirSync(s.rec.fs)));
    expect(s.rec.only('write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
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

  it('overwriteFile, durable: an existing file is written over, cut to the new length and fsynced; its directory is not', async () => {
    await fs.writeFile(path.join(base, 'status'), 'a longer old text');
    await resolved(overwriteFile(path.join(base, 'status'), 'new', new DirSync(s.rec.fs)));
    expect(s.rec.only('truncate', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
      'write status',
      'truncate status',
      'fsync status',
      'fsynced status',
      'resolved',
    ]);
    expect(await fs.readFile(path.join(base, 'status'), 'utf8')).toBe('new');
  });

  it('overwriteFile, durable: a new file is written and fsynced, then its directory (the new name) is', async () => {
    await resolved(overwriteFile(path.join(base, 'status'), 'new', new DirSync(s.rec.fs)));
    expect(s.rec.only('truncate', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
      'write status',
      'fsync status',
      'fsynced status',
      'fsync .',
      'fsynced .',
      'resolved',
    ]);
  });

  it('overwriteFile, not durable: written in place, no fsync at all; a longer text past the old end first, then over it', async () => {
    await overwriteFile(path.join(base, 'status'), 'first', undefined, s.rec.fs);
    await overwriteFile(path.join(base, 'status'), 'second', undefined, s.rec.fs);
    expect(s.rec.only('truncate', 'write', 'fsync')).toEqual(['write status', 'write status', 'write status']);
    expect(await fs.readFile(path.join(base, 'status'), 'utf8')).toBe('second');
  });

  it('renameDurable fsyncs both parents after the rename, or the one parent of a rename in place', async () => {
    await fs.mkdir(path.join(base, 'a'));
    await fs.mkdir(path.join(base, 'b'));
    await fs.writeFile(path.join(base, 'a', 'x'), '');
    await resolved(renameDurable(path.join(base, 'a', 'x'), path.join(base, 'b', 'x'), new DirSync(s.rec.fs)));
    const across = s.rec.only('rename', 'fsynced', 'resolved');
    expect(across[0]).toBe('rename a/x -> b/x');
    expect(across.slice(1, 3).sort()).toEqual(['fsynced a', 'fsynced b']);
    expect(across[3]).toBe('resolved');
    s.rec.clear();
    await resolved(renameDurable(path.join(base, 'b', 'x'), path.join(base, 'b', 'y'), new DirSync(s.rec.fs)));
    expect(s.rec.only('rename', 'fsynced', 'resolved')).toEqual(['rename b/x -> b/y', 'fsynced b', 'resolved']);
  });

  it('mkdirDurable fsyncs the parent of each level it made, and nothing for a directory that exists', async () => {
    await mkdirDurable(path.join(base, 'd1', 'd2', 'd3'), new DirSync(s.rec.fs));
    expect(s.rec.only('fsynced').sort()).toEqual(['fsynced .', 'fsynced d1', 'fsynced d1/d2']);
    s.rec.clear();
    await mkdirDurable(path.join(base, 'd1', 'd2'), new DirSync(s.rec.fs));
    await mkdirDurable(path.join(base, 'd1', 'd2', 'd4'), new DirSync(s.rec.fs));
    expect(s.rec.only('fsynced')).toEqual(['fsynced d1/d2']);
  });
});

describe('attachments', () => {
  const exdev = () => Promise.reject(Object.assign(new Error('EXDEV: cross-device link not permitted'), { code: 'EXDEV' }));

  it.each([
    ['hard link', 'link', (f: SpoolFs) => f],
    ['copy across filesystems', 'write', (f: SpoolFs): SpoolFs => ({ ...f, link: exdev })],
  ])('attach (%s): data stored under a temp name, fsynced, renamed, attach/ fsynced, resolved', async (_how, stored, fsOf) => {
    const src = path.join(s.root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: false });
    const attaching = new QueueSpool(s.root, 'test', { host: HOST, fs: fsOf(s.rec.fs) });
    s.rec.clear();
    await resolved(attaching.attach(id, src, 'data.bin'));
    const msgDir = rel(s.spool.msgDir('prep', id));
    const tmp = `${msgDir}/attach/.data.bin.tmp`;
    expect(s.rec.only('link', 'write', 'fsync', 'fsynced', 'rename', 'resolved')).toEqual([
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
    expect(await fs.readFile(path.join(s.root, msgDir, 'attach', 'data.bin'), 'utf8')).toBe('attachment bytes');
  });

  it('clone: attachments linked and attach/ fsynced before the message is renamed into que/', async () => {
    const src = path.join(s.root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const { msg_id: orig } = await s.spool.create({ dest: 'test' }, { commit: false });
    await s.spool.attach(orig, src, 'one.bin');
    s.rec.clear();
    const clone = await resolved(createCopy(s.spool, { dest: 'test' }, s.spool.msgDir('prep', orig)));
    const prepDir = rel(s.spool.msgDir('prep', clone.msg_id));
    const rename = `rename ${prepDir} -> ${rel(s.spool.msgDir('que', clone.msg_id))}`;
    expectOrder(s.rec.log, [`link ${prepDir}/attach/one.bin`], [`fsync ${prepDir}/attach`]);
    expectOrder(s.rec.log, [`fsynced ${prepDir}/attach`], [rename]);
    expectOrder(s.rec.log, [rename], [`fsync ${rel(s.spool.paths.state.que)}`]);
    expectOrder(s.rec.log, [`fsynced ${rel(s.spool.paths.state.que)}`], ['resolved']);
  });
});
