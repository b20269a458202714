// Recovery at queue start (src/spool/recovery.ts) of what a crash or stop interrupted: runs counted against max_interrupts, and ends decided or cancelled before the crash carried out.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { markShutdown } from '../../src/spool/message-files.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { HOST, ls, perTestSpool } from '../helpers/temp-spool.js';
import { recoverSpool } from '../../src/spool/recovery.js';

const s = perTestSpool('test', Date.UTC(2026, 10, 21, 16, 43, 46, 613));

describe('recover', () => {
  it('with max_interrupts: a run a graceful stop marked goes back uncounted and loses its mark; an unmarked one counts as a crash', async () => {
    const stopped = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const crashed = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await s.spool.move(stopped, 'que', 'run', { actor: 'dispatcher', durable: false });
    await s.spool.move(crashed, 'que', 'run', { actor: 'dispatcher', durable: false });
    // What the queue writes when a stop (not a crash) interrupts a run (rq-beyond §B13).
    await markShutdown(s.spool.msgDir('run', stopped), s.spool.fs);

    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const rec = await recoverSpool(fresh, undefined, { maxInterrupts: 3 });
    expect(rec.requeued.sort()).toEqual([stopped, crashed].sort());
    expect((await fresh.readMessage('que', stopped)).interrupts).toBeUndefined();
    expect((await fresh.readMessage('que', crashed)).interrupts).toBe(1);
    // The mark is spent: a crash in the next run of the same message counts.
    expect(await ls(fresh.msgDir('que', stopped))).not.toContain('shutdown');
    await fresh.move(stopped, 'que', 'run', { actor: 'dispatcher', durable: false });
    await recoverSpool(new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock }), undefined, { maxInterrupts: 3 });
    expect((await fresh.readMessage('que', stopped)).interrupts).toBe(1);
  });

  it('with max_interrupts: a run whose end was decided before the crash (msg has its outcome) finishes to err as decided; the crash is not counted', async () => {
    const atLimit = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const neverInterrupted = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    // What a finish to err leaves when a kill -9 comes between its writes and the rename out of run/:
    // the final status, then msg with the outcome (transitions/finish.ts).
    for (const [id, interrupts] of [
      [atLimit, 3],
      [neverInterrupted, undefined],
    ] as const) {
      await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
      await s.spool.writeStatus(s.spool.msgDir('run', id), 'RETRIES EXHAUSTED (2) - boom', true);
      const msg = await s.spool.readMessage('run', id);
      await s.spool.writeMessage('run', id, { ...msg, outcome: 'exhausted', ...(interrupts === undefined ? {} : { interrupts }) });
    }

    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const rec = await recoverSpool(fresh, undefined, { maxInterrupts: 3 });
    expect(rec.finished.sort()).toEqual([atLimit, neverInterrupted].sort());
    expect(rec.que).toEqual([]);
    // Counting it would have made the one at the limit a crash loop (INTERRUPTED 4 TIMES, outcome interrupted).
    for (const id of [atLimit, neverInterrupted]) {
      expect(await fresh.locate(id)).toBe('err');
      expect((await fresh.readStatus('err', id))?.job_status).toBe('RETRIES EXHAUSTED (2) - boom');
      expect((await fresh.readMessage('err', id)).outcome).toBe('exhausted');
    }
    expect((await fresh.readMessage('err', atLimit)).interrupts).toBe(3);
    expect((await fresh.readMessage('err', neverInterrupted)).interrupts).toBeUndefined();
  });

  it('a run cancelled before the crash ends in err cancelled, a purge cancel is carried out, a torn marker still cancels; none is counted as a crash', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
      await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
      ids.push(id);
    }
    const [reasoned, purge, broken, noMsg] = ids;
    const marker = (id: string, text: string) => fs.writeFile(path.join(s.spool.msgDir('run', id), 'cancel'), text);
    await marker(reasoned, JSON.stringify({ at: 1, by: 'ops', reason: 'not today' }));
    await marker(purge, JSON.stringify({ by: 'ops', purge: true }));
    await marker(broken, '{"by": "op');
    await marker(noMsg, JSON.stringify({ reason: 'gone' }));
    await fs.writeFile(path.join(s.spool.msgDir('run', noMsg), 'msg'), '{"half');

    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const seen: string[] = [];
    const rec = await recoverSpool(fresh, async (id) => void seen.push(id), { maxInterrupts: 0 });
    expect(seen.sort()).toEqual([...ids].sort());
    expect(rec.purged).toEqual([purge]);
    expect(rec.finished.sort()).toEqual([reasoned, broken, noMsg].sort());
    expect(rec.requeued).toEqual([]);
    expect(rec.que).toEqual([]);
    expect(await fresh.locate(purge)).toBeNull();
    expect(await ls(fresh.paths.state.run)).toEqual([]);
    expect((await fresh.readStatus('err', reasoned))?.job_status).toBe('CANCELLED - not today');
    expect(await fresh.readMessage('err', reasoned)).toMatchObject({ outcome: 'cancelled', cancel: { at: 1, by: 'ops', reason: 'not today' } });
    expect((await fresh.readMessage('err', reasoned)).interrupts).toBeUndefined();
    expect((await fresh.readHistory('err', reasoned)).at(-1)).toMatchObject({
      from: 'run',
      to: 'err',
      actor: 'recovery',
      outcome: 'cancelled',
      reason: 'CANCELLED - not today',
    });
    expect((await fresh.readStatus('err', broken))?.job_status).toBe('CANCELLED - cancelled');
    expect(await fresh.readMessage('err', broken)).toMatchObject({ outcome: 'cancelled', cancel: {} });
    // Its msg cannot take the outcome; the status says what happened.
    expect(await fresh.locate(noMsg)).toBe('err');
    expect((await fresh.readStatus('err', noMsg))?.job_status).toBe('CANCELLED - gone');
  });

  it('a message in prep or que whose end was decided before the crash goes to err, or is removed if it was a purge', async () => {
    const decided = async (commit: boolean, extra: Record<string, unknown>) =>
      (await s.spool.create({ dest: 'test' }, { commit, extra: { outcome: 'cancelled', ...extra } })).msg_id;
    const prepErr = await decided(false, { cancel: { reason: 'x' } });
    const prepPurge = await decided(false, { cancel: { purge: true } });
    const queErr = await decided(true, { outcome: 'exhausted' });
    const quePurge = await decided(true, { cancel: { purge: true } });
    // A purge flag that is not `true` is no purge.
    const queNotPurge = await decided(true, { cancel: { purge: 'yes' } });
    const kept = (await s.spool.create({ dest: 'test' }, { commit: false, extra: { cancel: { purge: true } } })).msg_id;
    // A cancel without an outcome was never decided: the message loads as any other.
    const queUndecided = (await s.spool.create({ dest: 'test' }, { commit: true, extra: { cancel: { purge: true } } })).msg_id;

    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const rec = await recoverSpool(fresh);
    expect(rec.purged.sort()).toEqual([prepPurge, quePurge].sort());
    expect(rec.finished.sort()).toEqual([prepErr, queErr, queNotPurge].sort());
    expect(rec.prep).toEqual([kept]);
    expect(rec.que.map((m) => m.msg_id)).toEqual([queUndecided]);
    for (const id of [prepPurge, quePurge]) expect(await fresh.locate(id)).toBeNull();
    for (const id of [prepErr, queErr, queNotPurge]) expect(await fresh.locate(id)).toBe('err');
    expect((await fresh.readHistory('err', prepErr)).at(-1)).toMatchObject({
      from: 'prep',
      to: 'err',
      actor: 'recovery',
      reason: 'outcome decided before a crash',
    });
    expect((await fresh.readHistory('err', queErr)).at(-1)).toMatchObject({
      from: 'que',
      to: 'err',
      actor: 'recovery',
      reason: 'outcome exhausted decided before a crash',
    });
    expect(await ls(fresh.paths.state.prep)).toEqual([kept]);
  });

  it('with max_interrupts: the crash that goes past it ends the run in err interrupted; an unreadable msg is requeued uncounted', async () => {
    const atMax = (await s.spool.create({ dest: 'test' }, { commit: true, extra: { interrupts: 2 } })).msg_id;
    const past = (await s.spool.create({ dest: 'test' }, { commit: true, extra: { interrupts: 3 } })).msg_id;
    const unreadable = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    for (const id of [atMax, past, unreadable]) await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await s.spool.checkpoint();
    await fs.writeFile(path.join(s.spool.msgDir('run', unreadable), 'msg'), '{"half');

    const rec = await recoverSpool(new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock }), undefined, { maxInterrupts: 3 });
    expect(rec.finished).toEqual([past]);
    expect(rec.requeued.sort()).toEqual([atMax, unreadable].sort());
    expect(rec.broken).toEqual([unreadable]);
    expect((await s.spool.readMessage('que', atMax)).interrupts).toBe(3);
    expect(await s.spool.readMessage('err', past)).toMatchObject({ interrupts: 4, outcome: 'interrupted' });
    expect((await s.spool.readStatus('err', past))?.job_status).toBe('INTERRUPTED 4 TIMES - max_interrupts is 3');
    expect((await s.spool.readHistory('err', past)).at(-1)).toMatchObject({
      from: 'run',
      to: 'err',
      actor: 'recovery',
      outcome: 'interrupted',
      reason: 'INTERRUPTED 4 TIMES - max_interrupts is 3',
    });
  });
});
