// The order of a message's creates and moves behind "OK means fsynced" (design.md §4), observed through a recording SpoolFs: journal records, renames, fsyncs of message, state and hash dirs.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { HOST } from '../helpers/temp-spool.js';
import { expectOrder, orderSpool } from './durability-order-harness.js';

const s = orderSpool();
const { rel, resolved } = s;

describe('create', () => {
  /** The one rename of a create: its private temp dir into the state dir. */
  function createRename(dir: string): { tmp: string; line: string } {
    const renames = s.rec.only('rename');
    expect(renames).toHaveLength(1);
    const tmp = /^rename (\S+) -> /.exec(renames[0])![1];
    expect(renames[0]).toBe(`rename ${tmp} -> ${dir}`);
    return { tmp, line: renames[0] };
  }

  it('into que/: msg written, dir renamed, then its journal record written and fsynced, and only then resolved; the message dir pays no fsync', async () => {
    const msg = await resolved(s.spool.create({ dest: 'test' }, { commit: true }));
    const dir = rel(s.spool.msgDir('que', msg.msg_id));
    const { tmp, line } = createRename(dir);
    const segment = s.rec
      .only('open')
      .find((l) => l.startsWith('open queues/test/journal/'))!
      .slice('open '.length);
    expect(segment).toBe('queues/test/journal/000000000001.log');
    const log = s.rec.log;
    expectOrder(log, [`write ${tmp}/msg`], [line]);
    // The segment's name is durable in the journal dir before any record in it counts.
    expectOrder(log, [line, 'fsynced queues/test/journal'], [`write ${segment}`]);
    expectOrder(log, [`write ${segment}`], [`fsync ${segment}`]);
    expectOrder(log, [`fsynced ${segment}`], ['resolved']);
    expect(s.rec.only('fsync').filter((l) => l.startsWith(`fsync ${dir}`) || l === 'fsync queues/test/que')).toEqual([]);
    expect(await fs.readFile(path.join(s.root, segment), 'utf8')).toContain(`"id":"${msg.msg_id}"`);
  });

  it('a create into que/ is there before its journal record is begun: the caller starts it first, then the record goes', async () => {
    // Calls as they are made (the recording logs each once it has completed).
    const called: string[] = [];
    const fsCalls = { ...s.rec.fs, open: (p: string, flags: string | number, mode?: number) => (called.push(rel(p)), s.rec.fs.open(p, flags, mode)) };
    s.spool = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock, fs: fsCalls });
    const c = s.spool.createNow({ dest: 'test' }, { commit: true });
    expect(s.rec.log).toContain(`rename ${createRename(rel(c.dir)).tmp} -> ${rel(c.dir)}`);
    expect(called).toEqual([]);
    await resolved(c.durable);
    expect(called).toContain('queues/test/journal/000000000001.log');
    expectOrder(s.rec.log, ['write queues/test/journal/000000000001.log'], ['resolved']);
  });

  it('a checkpoint syncs the filesystem, then empties the segment and makes that durable; a later create appends to it', async () => {
    const first = await s.spool.create({ dest: 'test' }, { commit: true });
    s.rec.clear();
    await resolved(s.spool.checkpoint());
    expect(s.rec.only('syncfs', 'syncfsed', 'truncate', 'rm', 'fsync', 'fsynced', 'resolved')).toEqual([
      'syncfs queues/test/journal',
      'syncfsed queues/test/journal',
      'truncate queues/test/journal/000000000001.log',
      'fsync queues/test/journal/000000000001.log',
      'fsynced queues/test/journal/000000000001.log',
      'resolved',
    ]);
    const second = await s.spool.create({ dest: 'test' }, { commit: true });
    expect(await fs.readdir(s.spool.paths.journalDir)).toEqual(['000000000001.log']);
    expect(await fs.readFile(path.join(s.spool.paths.journalDir, '000000000001.log'), 'utf8')).toContain(second.msg_id);
    expect(await s.spool.readMessage('que', first.msg_id)).toMatchObject({ msg_id: first.msg_id });
  });

  it('any directory fsync of the queue waits for a checkpoint first: nothing is made durable inside a message dir whose name is not', async () => {
    const msg = await s.spool.create({ dest: 'test' }, { commit: true });
    s.rec.clear();
    await resolved(s.spool.writeMessage('que', msg.msg_id, { ...msg, param1: 'changed' }));
    expectOrder(s.rec.log, ['syncfsed queues/test/journal'], [`fsync ${rel(s.spool.msgDir('que', msg.msg_id))}`]);
    expectOrder(s.rec.log, [`fsynced ${rel(s.spool.msgDir('que', msg.msg_id))}`], ['resolved']);
  });

  it.each([
    ['into prep/ (attachments follow)', {}, false, 'prep'],
    ['into que/ without a journal', { journal: false }, true, 'que'],
  ] as const)('%s: msg written, dir renamed, then msg, message dir and state dir fsynced, and only then resolved', async (_name, opts, commit, state) => {
    s.spool = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock, fs: s.rec.fs, ...opts });
    s.rec.clear();
    const msg = await resolved(s.spool.create({ dest: 'test' }, { commit }));
    const dir = rel(s.spool.msgDir(state, msg.msg_id));
    const stateDir = rel(s.spool.paths.state[state]);
    const { tmp, line } = createRename(dir);
    const log = s.rec.log;
    expectOrder(log, [`write ${tmp}/msg`], [line]);
    // The descriptors followed the rename: these are the written file and the directory renamed.
    expectOrder(log, [line], [`fsync ${dir}/msg`, `fsync ${dir}`, `fsync ${stateDir}`]);
    // The name in the state dir is made durable only once what it names is.
    expectOrder(log, [`fsynced ${dir}/msg`, `fsynced ${dir}`], [`fsync ${stateDir}`]);
    expectOrder(log, [`fsynced ${dir}/msg`, `fsynced ${dir}`, `fsynced ${stateDir}`], ['resolved']);
    expect(s.rec.only('open').filter((l) => l.includes('journal/'))).toEqual([]);
  });
});

describe('moves and hash dirs', () => {
  it('move: one rename, then source and target dirs fsynced before it resolves', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    s.rec.clear();
    await resolved(s.spool.move(id, 'que', 'err', { actor: 'test' }));
    const [que, err] = [rel(s.spool.paths.state.que), rel(s.spool.paths.state.err)];
    const rename = `rename ${que}/${id} -> ${err}/${id}`;
    expect(s.rec.only('rename')).toEqual([rename]);
    expectOrder(s.rec.log, [rename], [`fsync ${que}`, `fsync ${err}`]);
    expectOrder(s.rec.log, [`fsynced ${que}`, `fsynced ${err}`], ['resolved']);
  });

  it('move with durable: false renames and fsyncs nothing', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    s.rec.clear();
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect(s.rec.only('rename', 'fsync')).toEqual([`rename ${rel(s.spool.paths.state.que)}/${id} -> ${rel(s.spool.paths.state.run)}/${id}`]);
  });

  it('a move into a new hash dir fsyncs the parent of each new level before the rename, then que/ and the minute dir', async () => {
    const done = rel(s.spool.paths.state.done);
    const day = `${done}/20261121`;
    const minute = `${day}/16/43`;
    const { msg_id: a } = await s.spool.create({ dest: 'test' }, { commit: true });
    s.clock += 60_000;
    const { msg_id: b } = await s.spool.create({ dest: 'test' }, { commit: true });
    const { msg_id: c } = await s.spool.create({ dest: 'test' }, { commit: true });
    const que = rel(s.spool.paths.state.que);
    // The creates' checkpoint out of the way: the move's own fsyncs are what is looked at.
    await s.spool.checkpoint();

    s.rec.clear();
    await resolved(s.spool.move(a, 'que', 'done', { actor: 'test' }));
    const rename = `rename ${que}/${a} -> ${minute}/${a}`;
    const levels = [`fsync ${done}`, `fsync ${day}`, `fsync ${day}/16`];
    expect(s.rec.only('mkdir')).toEqual([`mkdir ${minute}`]);
    expect(s.rec.only('fsync').slice(0, 3).sort()).toEqual(levels.sort());
    expectOrder(s.rec.log, [`mkdir ${minute}`], levels);
    expectOrder(
      s.rec.log,
      levels.map((l) => l.replace('fsync', 'fsynced')),
      [rename],
    );
    expectOrder(s.rec.log, [rename], [`fsync ${que}`, `fsync ${minute}`]);
    expectOrder(s.rec.log, [`fsynced ${que}`, `fsynced ${minute}`], ['resolved']);
    expect(s.rec.only('fsync')).toHaveLength(5);

    // A new minute in an existing hour: only the hour, the new level's parent, is fsynced for it.
    s.rec.clear();
    await resolved(s.spool.move(b, 'que', 'done', { actor: 'test' }));
    expect(s.rec.only('mkdir')).toEqual([`mkdir ${day}/16/44`]);
    expectOrder(s.rec.log, [`mkdir ${day}/16/44`], [`fsync ${day}/16`]);
    expectOrder(s.rec.log, [`fsynced ${day}/16`], [`rename ${que}/${b} -> ${day}/16/44/${b}`]);
    expect(s.rec.only('fsync').sort()).toEqual([`fsync ${day}/16`, `fsync ${day}/16/44`, `fsync ${que}`].sort());

    // An existing minute: no levels made, none fsynced.
    s.rec.clear();
    await s.spool.move(c, 'que', 'done', { actor: 'test' });
    expect(s.rec.only('mkdir')).toEqual([]);
    expect(s.rec.only('fsync').sort()).toEqual([`fsync ${day}/16/44`, `fsync ${que}`].sort());
  });
});
