// Transitions (the waiting messages' moves) on a real spool in a temp dir and a real MessageIndex: the disk, memory, counts and events of each move, and memory put back when the disk refuses.
import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { caught } from '../../helpers/temp-spool.js';
import { transitionsPerTest } from './on-temp-spool.js';

const s = transitionsPerTest();

describe('created and uncreated', () => {
  it('a prep message is held in prep, heard of, and starts nothing', () => {
    const m = { msg_id: 'p1', dest: 'test', due: 0 } as Message;
    s.moves.created(m, 'prep');
    expect(s.index.liveState('p1')).toBe('prep');
    expect(s.index.takePrep('p1')).toBe(m);
    expect(s.seen).toEqual(['created prep']);
  });

  it('a que message is enqueued unless it waits, heard of before the pump', () => {
    s.moves.created({ msg_id: 'q1', dest: 'test', due: 0 } as Message, 'que');
    s.waiting.add('q2');
    s.moves.created({ msg_id: 'q2', dest: 'test', due: 0 } as Message, 'que');
    expect([s.index.isQueued('q1'), s.index.isQueued('q2')]).toEqual([true, false]);
    expect(s.seen).toEqual(['created que', 'pump', 'created que', 'pump']);
  });

  it('uncreated lets go of it where it was and tells observers it is gone', () => {
    s.moves.created({ msg_id: 'q1', dest: 'test', due: 0 } as Message, 'que');
    s.moves.created({ msg_id: 'p1', dest: 'test', due: 0 } as Message, 'prep');
    s.seen = [];
    s.moves.uncreated('q1', 'que');
    s.moves.uncreated('p1', 'prep');
    expect([s.index.liveState('q1'), s.index.liveState('p1')]).toEqual([null, null]);
    expect(s.seen).toEqual(['removed que', 'removed prep']);
  });
});

describe('commit', () => {
  it('of an id not in prep is null and changes nothing', async () => {
    expect(await s.moves.commit('20261121164346.000001')).toBeNull();
    expect(s.seen).toEqual([]);
  });

  it('reads a message memory does not hold, renames it to que/, enqueues it and pumps', async () => {
    const m = await s.make(false);
    s.index.addPrep(m.msg_id, null);
    const done = await s.moves.commit(m.msg_id);
    expect(done?.waits).toBe(false);
    await done!.sync();
    expect(await s.spool.exists('que', m.msg_id)).toBe(true);
    expect(s.index.liveState(m.msg_id)).toBe('que');
    expect(s.index.queued(m.msg_id)?.dest).toBe('test');
    expect(s.seen).toEqual(['pump']);
    expect((await s.spool.readHistory('que', m.msg_id)).at(-1)).toMatchObject({ from: 'prep', to: 'que', actor: 'commit' });
  });

  it('of a message that waits on dependencies leaves it out of the que', async () => {
    const m = await s.make(false);
    s.index.addPrep(m.msg_id, m);
    s.waiting.add(m.msg_id);
    expect((await s.moves.commit(m.msg_id))?.waits).toBe(true);
    expect(s.index.isQueued(m.msg_id)).toBe(false);
    expect(s.seen).toEqual(['pump']);
  });

  it('refused by the disk puts the message back in prep as memory knew it', async () => {
    const m = await s.make(false);
    s.index.addPrep(m.msg_id, m);
    await s.block('que', m.msg_id);
    await caught(s.moves.commit(m.msg_id));
    expect(s.index.takePrep(m.msg_id)).toBe(m);
    expect(s.seen).toEqual([]);
  });

  it('of a message whose directory is gone forgets it', async () => {
    const m = await s.make(false);
    s.index.addPrep(m.msg_id, m);
    await fs.rm(s.spool.msgDir('prep', m.msg_id), { recursive: true });
    await caught(s.moves.commit(m.msg_id));
    expect(s.index.liveState(m.msg_id)).toBeNull();
  });
});

describe('remove', () => {
  it('from prep, que, done and err: gone from disk and memory, finished counts follow, observers hear it', async () => {
    const p = await s.make(false);
    s.index.addPrep(p.msg_id, p);
    const q = await s.make(true);
    s.index.enqueue(q);
    const d = await s.make(true);
    await s.spool.move(d.msg_id, 'que', 'done', { actor: 't' });
    const e = await s.make(true);
    await s.spool.move(e.msg_id, 'que', 'err', { actor: 't' });
    await s.moves.remove(p.msg_id, 'prep');
    await s.moves.remove(q.msg_id, 'que');
    await s.moves.remove(d.msg_id, 'done');
    await s.moves.remove(e.msg_id, 'err');
    expect(await s.spool.locate(p.msg_id)).toBeNull();
    expect(await s.spool.locate(q.msg_id)).toBeNull();
    expect(await s.spool.locate(d.msg_id)).toBeNull();
    expect([s.index.liveState(p.msg_id), s.index.liveState(q.msg_id)]).toEqual([null, null]);
    expect(s.index.counts()).toMatchObject({ prep: 0, que: 0, done: 4, err: 4 });
    expect(s.seen).toEqual(['removed prep', 'removed que', 'removed done', 'removed err']);
  });

  it('of an acknowledged err message leaves the err count alone', async () => {
    const e = await s.make(true);
    await s.spool.move(e.msg_id, 'que', 'err', { actor: 't' });
    await fs.rename(s.spool.msgDir('err', e.msg_id), s.spool.msgDir('err', `.${e.msg_id}`));
    await s.moves.remove(`.${e.msg_id}`, 'err');
    expect(s.index.counts().err).toBe(5);
    expect(s.seen).toEqual(['removed err']);
  });

  it('refused by the disk: a prep message is back in memory, counts unchanged, nobody told', async () => {
    const p = await s.make(false);
    s.index.addPrep(p.msg_id, p);
    await fs.rm(s.spool.msgDir('prep', p.msg_id), { recursive: true });
    // The removal's own error, not one of reading the message back from where it never was.
    expect((await caught(s.moves.remove(p.msg_id, 'prep'))).message).toMatch(/^ENOENT: no such file or directory, rename .*prep\/_del\./);
    expect(s.index.takePrep(p.msg_id)).toBe(p);
    const d = await s.make(true);
    await s.spool.move(d.msg_id, 'que', 'done', { actor: 't' });
    await fs.rm(s.spool.msgDir('done', d.msg_id), { recursive: true });
    expect((await caught(s.moves.remove(d.msg_id, 'done'))).message).toMatch(/^ENOENT: no such file or directory, rename .*done/);
    expect(s.index.liveState(d.msg_id)).toBeNull();
    expect(s.index.counts().done).toBe(5);
    expect(s.seen).toEqual([]);
  });

  it('a que message refused by the disk is read back into the que', async () => {
    const q = await s.make(true, { param1: 'kept' });
    s.index.enqueue(q);
    // prep/ is where a removal renames to first: a file in its place makes that rename fail.
    await fs.rm(s.spool.paths.state.prep, { recursive: true });
    await fs.writeFile(s.spool.paths.state.prep, '');
    await caught(s.moves.remove(q.msg_id, 'que'));
    expect(s.index.queued(q.msg_id)?.param1).toBe('kept');
    expect(s.index.hasPrep(q.msg_id)).toBe(false);
    expect(s.seen).toEqual([]);
  });
});

describe('requeue', () => {
  it('err → que: enqueued, the err count drops unless it was acknowledged, pumped; the note is the history line', async () => {
    const a = await s.make(true);
    await s.spool.move(a.msg_id, 'que', 'err', { actor: 't' });
    const sync = await s.moves.requeue(a.msg_id, a, false, { actor: 'op', reason: 'again' });
    await sync();
    expect(await s.spool.exists('que', a.msg_id)).toBe(true);
    expect(s.index.isQueued(a.msg_id)).toBe(true);
    expect(s.index.counts().err).toBe(4);
    expect(s.seen).toEqual(['pump']);
    expect((await s.spool.readHistory('que', a.msg_id)).at(-1)).toMatchObject({ from: 'err', to: 'que', actor: 'op', reason: 'again' });
    const b = await s.make(true);
    await s.spool.move(b.msg_id, 'que', 'err', { actor: 't' });
    await s.moves.requeue(b.msg_id, b, true, { actor: 'op' });
    expect(s.index.counts().err).toBe(4);
  });
});
