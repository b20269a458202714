// Replaying the create journal at queue start, on real directories: the states a crash can leave an acknowledged create in.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST, ls, perTestSpool } from '../helpers/temp-spool.js';
import { recoverSpool } from '../../src/spool/recovery.js';
import { openUnder } from '../helpers/open-under.js';

const T0 = Date.UTC(2026, 10, 26, 12, 0, 0, 0);
const s = perTestSpool('test', T0);

/** The same root as a queue process restarted after a crash would open it. */
const restarted = (spool: QueueSpool, fsOverride = {}) => new QueueSpool(spool.root, 'test', { host: HOST, now: () => s.clock, ...fsOverride });

/** What a crash that lost the page cache can do to a message created since the last checkpoint. */
const lose = {
  dir: (spool: QueueSpool, id: string) => fs.rm(spool.msgDir('que', id), { recursive: true }),
  msg: (spool: QueueSpool, id: string) => fs.writeFile(path.join(spool.msgDir('que', id), 'msg'), ''),
  tail: (spool: QueueSpool, id: string) => fs.writeFile(path.join(spool.msgDir('que', id), 'msg'), '{"msg_id":"' + id.slice(0, 5)),
};

describe('journal replay', () => {
  it('makes again the dirs a crash lost and rewrites the msgs it tore, exactly as created; leaves the rest alone; deletes the journal', async () => {
    const make = (param1: string) => s.spool.create({ dest: 'test', param1 }, { commit: true });
    const [gone, empty, torn, intact] = [await make('gone'), await make('empty'), await make('torn'), await make('intact')];
    await lose.dir(s.spool, gone.msg_id);
    await lose.msg(s.spool, empty.msg_id);
    await lose.tail(s.spool, torn.msg_id);
    const intactBefore = await fs.stat(path.join(s.spool.msgDir('que', intact.msg_id), 'msg'));

    const again = restarted(s.spool);
    const rec = await recoverSpool(again);
    expect(rec.journal).toEqual({ records: 4, recreated: [gone.msg_id], rewritten: [empty.msg_id, torn.msg_id], damaged: 0 });
    // By id, as the scan lists que/: under a fixed clock ids differ only by inode, in no set order.
    expect(rec.que.map((m) => m.msg_id)).toEqual([gone, empty, torn, intact].map((m) => m.msg_id).sort());
    for (const m of [gone, empty, torn, intact]) expect(await again.readMessage('que', m.msg_id)).toEqual(m);
    expect(rec.broken).toEqual([]);
    expect((await fs.stat(path.join(again.msgDir('que', intact.msg_id), 'msg'))).ino).toBe(intactBefore.ino);
    expect(await ls(again.paths.journalDir)).toEqual([]);
    // Nothing of the replay's own is left in prep/, nor open.
    expect(await ls(again.paths.state.prep)).toEqual([]);
    expect(await openUnder(again.paths.state.que)).toEqual([]);
  });

  it('a message found in any state, an acknowledged err among them, is where its life took it: not made again', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await s.spool.create({ dest: 'test' }, { commit: true })).msg_id);
    const [ran, done, failed, acked] = ids;
    // The journal as a crash before any checkpoint would leave it (a move to done/ checkpoints: its hash dir is fsynced).
    const [segment] = await ls(s.spool.paths.journalDir);
    const journal = await fs.readFile(path.join(s.spool.paths.journalDir, segment));
    await s.spool.move(ran, 'que', 'run', { actor: 'dispatcher', durable: false });
    await s.spool.move(done, 'que', 'done', { actor: 'test', durable: false });
    await s.spool.move(failed, 'que', 'err', { actor: 'test', durable: false });
    await s.spool.move(acked, 'que', 'err', { actor: 'test', durable: false });
    await fs.rename(s.spool.msgDir('err', acked), s.spool.msgDir('err', `.${acked}`));
    await fs.writeFile(path.join(s.spool.paths.journalDir, segment), journal);

    const rec = await recoverSpool(restarted(s.spool));
    expect(rec.journal).toMatchObject({ records: 4, recreated: [], rewritten: [] });
    expect(rec.requeued).toEqual([ran]);
    expect(await s.spool.locate(done)).toBe('done');
    expect(await s.spool.locate(failed)).toBe('err');
    expect(await s.spool.exists('err', `.${acked}`)).toBe(true);
    expect(await s.spool.locate(acked)).toBeNull();
  });

  it('a torn last line (its creator was never answered) is counted and skipped; the whole records before it still count', async () => {
    const kept = await s.spool.create({ dest: 'test' }, { commit: true });
    await lose.dir(s.spool, kept.msg_id);
    const [segment] = await ls(s.spool.paths.journalDir);
    await fs.appendFile(path.join(s.spool.paths.journalDir, segment), '0badc0de {"id":"2026112');
    const rec = await recoverSpool(restarted(s.spool));
    expect(rec.journal).toEqual({ records: 1, recreated: [kept.msg_id], rewritten: [], damaged: 1 });
    expect(rec.que.map((m) => m.msg_id)).toEqual([kept.msg_id]);
  });

  it('a deleted message stays deleted: the delete waits for a checkpoint, so no record is left to bring it back', async () => {
    const m = await s.spool.create({ dest: 'test' }, { commit: true });
    await s.spool.remove('que', m.msg_id);
    // What is left is the checkpointed segment, emptied for the next records.
    expect(await ls(s.spool.paths.journalDir)).toEqual(['000000000001.log']);
    expect(await fs.readFile(path.join(s.spool.paths.journalDir, '000000000001.log'), 'utf8')).toBe('');
    const rec = await recoverSpool(restarted(s.spool));
    expect(rec.journal.records).toBe(0);
    expect(await s.spool.locate(m.msg_id)).toBeNull();
  });

  it('makes its repairs durable with one filesystem sync before it deletes the journal, and the deletes durable after', async () => {
    const m = await s.spool.create({ dest: 'test' }, { commit: true });
    await lose.dir(s.spool, m.msg_id);
    const rec = recordingFs(s.spool.root);
    await recoverSpool(restarted(s.spool, { fs: rec.fs }));
    const log = rec.log;
    const made = log.indexOf(
      `rename ${path.relative(s.spool.root, s.spool.paths.state.prep)}/_replay.${process.pid}.0 -> ${path.relative(s.spool.root, s.spool.msgDir('que', m.msg_id))}`,
    );
    const synced = log.indexOf('syncfsed queues/test');
    const deleted = log.findIndex((l) => l.startsWith('rm queues/test/journal/'));
    expect(made).toBeGreaterThanOrEqual(0);
    expect(synced).toBeGreaterThan(made);
    expect(deleted).toBeGreaterThan(synced);
    // And the deletes are durable before the queue goes on (a delete of a replayed message then waits for no checkpoint).
    const lastDelete = log.map((l) => l.startsWith('rm queues/test/journal/')).lastIndexOf(true);
    expect(log.lastIndexOf('fsynced queues/test/journal')).toBeGreaterThan(lastDelete);
  });

  it('a root whose journal was deleted while the queue was stopped starts as before', async () => {
    const m = await s.spool.create({ dest: 'test' }, { commit: true });
    await fs.rm(s.spool.paths.journalDir, { recursive: true });
    const calls = recordingFs(s.spool.root);
    const again = restarted(s.spool, { fs: calls.fs });
    const rec = await recoverSpool(again);
    expect(rec.journal).toEqual({ records: 0, recreated: [], rewritten: [], damaged: 0 });
    // No journal, nothing to make durable: a start does not sync the filesystem for it.
    expect(calls.log.filter((l) => l.startsWith('syncfs'))).toEqual([]);
    expect(rec.que.map((q) => q.msg_id)).toEqual([m.msg_id]);
    await again.create({ dest: 'test' }, { commit: true });
    expect(await ls(again.paths.journalDir)).toEqual(['000000000001.log']);
  });
});
