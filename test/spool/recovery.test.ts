// Recovery at queue start (src/spool/recovery.ts) on real directories: temp names cleaned, run/ back to que/, que/ loaded, unreadable or already decided messages to err/, crashes counted against max_interrupts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markShutdown } from '../../src/spool/message-files.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST, type TempSpool, ls, tempSpool, walk } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);

let t: TempSpool;
let spool: QueueSpool;
let clock: number;

beforeEach(async () => {
  clock = T0;
  t = await tempSpool('test', { now: () => clock });
  spool = t.spool;
});
afterEach(() => t.cleanup());

describe('recover', () => {
  it('cleans temp names, returns run/ to que/, loads que/ and sends unreadable msgs to err/', async () => {
    const prepA = (await spool.create({ dest: 'test' }, { commit: false })).msg_id;
    clock += 1;
    const prepB = (await spool.create({ dest: 'test' }, { commit: false })).msg_id;
    const queued = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const running = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const broken = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const noDue = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const runDir = await spool.move(running, 'que', 'run', { actor: 'dispatcher', durable: false });
    await fs.writeFile(path.join(runDir, 'pid'), '999999');
    await fs.writeFile(path.join(runDir, 'status.tmp'), 'half');
    await fs.mkdir(path.join(runDir, 'job'));
    await fs.writeFile(path.join(runDir, 'job', 'script-owned.tmp'), 'the script keeps this');
    await fs.mkdir(path.join(spool.paths.state.prep, '_20261121.1643.46.613.1.2'));
    await fs.mkdir(path.join(spool.paths.state.prep, '_del.1.2'));
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await spool.checkpoint();
    await fs.writeFile(path.join(spool.msgDir('que', broken), 'msg'), '{"half');
    await fs.writeFile(path.join(spool.msgDir('que', queued), 'msg.tmp'), '{}');
    const m = await spool.readMessage('que', noDue);
    delete (m as Record<string, unknown>).due;
    await fs.writeFile(path.join(spool.msgDir('que', noDue), 'msg'), JSON.stringify(m));

    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const seen: string[] = [];
    const rec = await fresh.recover(async (id) => void seen.push(id));
    expect(seen).toEqual([running]);
    expect(rec.requeued).toEqual([running]);
    expect(rec.broken).toEqual([broken]);
    expect(rec.prep).toEqual([prepA, prepB].sort().reverse());
    expect(rec.que.map((q) => q.msg_id).sort()).toEqual([queued, running, noDue].sort());
    expect(rec.que.find((q) => q.msg_id === noDue)?.due).toBe(Math.floor(clock / 1000));
    expect((await fresh.readMessage('que', noDue)).due).toBe(Math.floor(clock / 1000));

    expect(await ls(fresh.paths.state.prep)).toEqual([prepA, prepB].sort());
    expect(await ls(fresh.paths.state.run)).toEqual([]);
    expect(await fresh.locate(broken)).toBe('err');
    expect((await fresh.readStatus('err', broken))?.job_status).toMatch(/^unreadable msg at recovery: /);
    const requeuedDir = fresh.msgDir('que', running);
    expect(await ls(requeuedDir)).toEqual(['history', 'job', 'msg']);
    expect(await fs.readFile(path.join(requeuedDir, 'job', 'script-owned.tmp'), 'utf8')).toBe('the script keeps this');
    expect((await fresh.readHistory('que', running)).at(-1)).toMatchObject({ from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' });
    expect((await walk(t.root)).filter((p) => p.endsWith('.tmp') && !p.includes(`${path.sep}job${path.sep}`))).toEqual([]);
  });

  it('with max_interrupts: a run a graceful stop marked goes back uncounted and loses its mark; an unmarked one counts as a crash', async () => {
    const stopped = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const crashed = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await spool.move(stopped, 'que', 'run', { actor: 'dispatcher', durable: false });
    await spool.move(crashed, 'que', 'run', { actor: 'dispatcher', durable: false });
    // What the queue writes when a stop (not a crash) interrupts a run (rq-beyond §B13).
    await markShutdown(spool.msgDir('run', stopped), spool.fs);

    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const rec = await fresh.recover(undefined, { maxInterrupts: 3 });
    expect(rec.requeued.sort()).toEqual([stopped, crashed].sort());
    expect((await fresh.readMessage('que', stopped)).interrupts).toBeUndefined();
    expect((await fresh.readMessage('que', crashed)).interrupts).toBe(1);
    // The mark is spent: a crash in the next run of the same message counts.
    expect(await ls(fresh.msgDir('que', stopped))).not.toContain('shutdown');
    await fresh.move(stopped, 'que', 'run', { actor: 'dispatcher', durable: false });
    await new QueueSpool(t.root, 'test', { host: HOST, now: () => clock }).recover(undefined, { maxInterrupts: 3 });
    expect((await fresh.readMessage('que', stopped)).interrupts).toBe(1);
  });

  it('with max_interrupts: a run whose end was decided before the crash (msg has its outcome) finishes to err as decided; the crash is not counted', async () => {
    const atLimit = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const neverInterrupted = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    // What a finish to err leaves when a kill -9 comes between its writes and the rename out of run/:
    // the final status, then msg with the outcome (transitions/finish.ts).
    for (const [id, interrupts] of [[atLimit, 3], [neverInterrupted, undefined]] as const) {
      await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
      await spool.writeStatus(spool.msgDir('run', id), 'RETRIES EXHAUSTED (2) - boom', true);
      const msg = await spool.readMessage('run', id);
      await spool.writeMessage('run', id, { ...msg, outcome: 'exhausted', ...(interrupts === undefined ? {} : { interrupts }) });
    }

    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const rec = await fresh.recover(undefined, { maxInterrupts: 3 });
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
      const id = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
      await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
      ids.push(id);
    }
    const [reasoned, purge, broken, noMsg] = ids;
    const marker = (id: string, text: string) => fs.writeFile(path.join(spool.msgDir('run', id), 'cancel'), text);
    await marker(reasoned, JSON.stringify({ at: 1, by: 'ops', reason: 'not today' }));
    await marker(purge, JSON.stringify({ by: 'ops', purge: true }));
    await marker(broken, '{"by": "op');
    await marker(noMsg, JSON.stringify({ reason: 'gone' }));
    await fs.writeFile(path.join(spool.msgDir('run', noMsg), 'msg'), '{"half');

    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const seen: string[] = [];
    const rec = await fresh.recover(async (id) => void seen.push(id), { maxInterrupts: 0 });
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
    expect((await fresh.readHistory('err', reasoned)).at(-1)).toMatchObject({ from: 'run', to: 'err', actor: 'recovery', outcome: 'cancelled', reason: 'CANCELLED - not today' });
    expect((await fresh.readStatus('err', broken))?.job_status).toBe('CANCELLED - cancelled');
    expect(await fresh.readMessage('err', broken)).toMatchObject({ outcome: 'cancelled', cancel: {} });
    // Its msg cannot take the outcome; the status says what happened.
    expect(await fresh.locate(noMsg)).toBe('err');
    expect((await fresh.readStatus('err', noMsg))?.job_status).toBe('CANCELLED - gone');
  });

  it('a message in prep or que whose end was decided before the crash goes to err, or is removed if it was a purge', async () => {
    const decided = async (commit: boolean, extra: Record<string, unknown>) => (await spool.create({ dest: 'test' }, { commit, extra: { outcome: 'cancelled', ...extra } })).msg_id;
    const prepErr = await decided(false, { cancel: { reason: 'x' } });
    const prepPurge = await decided(false, { cancel: { purge: true } });
    const queErr = await decided(true, { outcome: 'exhausted' });
    const quePurge = await decided(true, { cancel: { purge: true } });
    // A purge flag that is not `true` is no purge.
    const queNotPurge = await decided(true, { cancel: { purge: 'yes' } });
    const kept = (await spool.create({ dest: 'test' }, { commit: false, extra: { cancel: { purge: true } } })).msg_id;
    // A cancel without an outcome was never decided: the message loads as any other.
    const queUndecided = (await spool.create({ dest: 'test' }, { commit: true, extra: { cancel: { purge: true } } })).msg_id;

    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const rec = await fresh.recover();
    expect(rec.purged.sort()).toEqual([prepPurge, quePurge].sort());
    expect(rec.finished.sort()).toEqual([prepErr, queErr, queNotPurge].sort());
    expect(rec.prep).toEqual([kept]);
    expect(rec.que.map((m) => m.msg_id)).toEqual([queUndecided]);
    for (const id of [prepPurge, quePurge]) expect(await fresh.locate(id)).toBeNull();
    for (const id of [prepErr, queErr, queNotPurge]) expect(await fresh.locate(id)).toBe('err');
    expect((await fresh.readHistory('err', prepErr)).at(-1)).toMatchObject({ from: 'prep', to: 'err', actor: 'recovery', reason: 'outcome decided before a crash' });
    expect((await fresh.readHistory('err', queErr)).at(-1)).toMatchObject({ from: 'que', to: 'err', actor: 'recovery', reason: 'outcome exhausted decided before a crash' });
    expect(await ls(fresh.paths.state.prep)).toEqual([kept]);
  });

  it('a due that is a numeric string is read as its number and written back; one that is no number becomes now', async () => {
    const numeric = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const garbage = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const numberDue = (await spool.create({ dest: 'test', due: 1234 }, { commit: true })).msg_id;
    for (const [id, due] of [[numeric, '1700000000'], [garbage, 'soon']] as const) {
      const m = await spool.readMessage('que', id);
      await fs.writeFile(path.join(spool.msgDir('que', id), 'msg'), JSON.stringify({ ...m, due }));
    }
    clock += 5000;
    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock });
    const rec = await fresh.recover();
    const due = (id: string) => rec.que.find((q) => q.msg_id === id)?.due;
    expect(due(numeric)).toBe(1_700_000_000);
    expect(due(garbage)).toBe(Math.floor(clock / 1000));
    expect(due(numberDue)).toBe(1234);
    expect((await fresh.readMessage('que', numeric)).due).toBe(1_700_000_000);
    expect((await fresh.readMessage('que', garbage)).due).toBe(Math.floor(clock / 1000));
  });

  it('removes blank dirs made ahead and the temp files of messages in prep and err', async () => {
    const inPrep = (await spool.create({ dest: 'test' }, { commit: false })).msg_id;
    const inErr = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await spool.move(inErr, 'que', 'err', { actor: 'test' });
    for (const dir of [spool.msgDir('prep', inPrep), spool.msgDir('err', inErr)]) await fs.writeFile(path.join(dir, 'msg.tmp'), '{}');
    await fs.mkdir(path.join(spool.paths.dir, '.blank', '3'), { recursive: true });
    await spool.recover();
    expect(await ls(spool.msgDir('prep', inPrep))).toEqual(['msg']);
    expect(await ls(spool.msgDir('err', inErr))).toEqual(['history', 'msg']);
    expect(await ls(spool.paths.dir)).not.toContain('.blank');
  });

  it('with max_interrupts: the crash that goes past it ends the run in err interrupted; an unreadable msg is requeued uncounted', async () => {
    const atMax = (await spool.create({ dest: 'test' }, { commit: true, extra: { interrupts: 2 } })).msg_id;
    const past = (await spool.create({ dest: 'test' }, { commit: true, extra: { interrupts: 3 } })).msg_id;
    const unreadable = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    for (const id of [atMax, past, unreadable]) await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await spool.checkpoint();
    await fs.writeFile(path.join(spool.msgDir('run', unreadable), 'msg'), '{"half');

    const rec = await new QueueSpool(t.root, 'test', { host: HOST, now: () => clock }).recover(undefined, { maxInterrupts: 3 });
    expect(rec.finished).toEqual([past]);
    expect(rec.requeued.sort()).toEqual([atMax, unreadable].sort());
    expect(rec.broken).toEqual([unreadable]);
    expect((await spool.readMessage('que', atMax)).interrupts).toBe(3);
    expect(await spool.readMessage('err', past)).toMatchObject({ interrupts: 4, outcome: 'interrupted' });
    expect((await spool.readStatus('err', past))?.job_status).toBe('INTERRUPTED 4 TIMES - max_interrupts is 3');
    expect((await spool.readHistory('err', past)).at(-1)).toMatchObject({ from: 'run', to: 'err', actor: 'recovery', outcome: 'interrupted', reason: 'INTERRUPTED 4 TIMES - max_interrupts is 3' });
  });

  it('loads que/ in id order, and rewrites only the msgs it changed; what it writes to finish a message is fsynced before the move', async () => {
    const ids: string[] = [];
    // Made newest id first: a small directory lists its entries in the order they were made.
    for (let i = 0; i < 5; i++) {
      ids.unshift((await spool.create({ dest: 'test' }, { commit: true })).msg_id);
      clock -= 1;
    }
    const [noDue, unreadable] = [ids[1], ids[3]];
    const m = await spool.readMessage('que', noDue);
    await fs.writeFile(path.join(spool.msgDir('que', noDue), 'msg'), JSON.stringify({ ...m, due: undefined }));
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await spool.checkpoint();
    await fs.writeFile(path.join(spool.msgDir('que', unreadable), 'msg'), '{"half');

    const rec = recordingFs(t.root);
    const fresh = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock, fs: rec.fs });
    const loaded = await fresh.recover();
    expect(loaded.que.map((q) => q.msg_id)).toEqual(ids.filter((id) => id !== unreadable));
    const rel = (...p: string[]) => path.relative(t.root, path.join(...p));
    // Only the msg without a due was written again (msg.tmp renamed over msg).
    expect(rec.only('rename').filter((l) => l.includes(`${path.sep}msg`))).toEqual([`rename ${rel(fresh.msgDir('que', noDue), 'msg.tmp')} -> ${rel(fresh.msgDir('que', noDue), 'msg')}`]);
    const status = rel(fresh.msgDir('que', unreadable), 'status');
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeGreaterThan(-1);
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeLessThan(rec.log.findIndex((l) => l.startsWith(`rename ${rel(fresh.msgDir('que', unreadable))} ->`)));
    expect((await fresh.readHistory('err', unreadable)).at(-1)).toMatchObject({ from: 'que', to: 'err', actor: 'recovery', reason: 'unreadable msg' });
  });

  it('the status of a run finished at load is fsynced before its move to err/', async () => {
    const id = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    await fs.writeFile(path.join(spool.msgDir('run', id), 'cancel'), '{}');
    const rec = recordingFs(t.root);
    await new QueueSpool(t.root, 'test', { host: HOST, now: () => clock, fs: rec.fs }).recover();
    const status = path.relative(t.root, path.join(spool.msgDir('run', id), 'status'));
    const moved = rec.log.findIndex((l) => l.startsWith(`rename ${path.relative(t.root, spool.msgDir('run', id))} ->`));
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeGreaterThan(-1);
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeLessThan(moved);
  });

  it('creates missing state dirs', async () => {
    await fs.rm(spool.paths.state.relayed, { recursive: true });
    await spool.recover();
    expect((await fs.stat(spool.paths.state.relayed)).isDirectory()).toBe(true);
  });
});
