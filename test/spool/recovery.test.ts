// Recovery at queue start (src/spool/recovery.ts) on real directories: temp names cleaned, run/ back to que/, que/ loaded, unreadable or already decided messages to err/, crashes counted against max_interrupts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markShutdown } from '../../src/spool/message-files.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
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
    // the final status, then msg with the outcome (failure-moves.ts).
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

  it('creates missing state dirs', async () => {
    await fs.rm(spool.paths.state.relayed, { recursive: true });
    await spool.recover();
    expect((await fs.stat(spool.paths.state.relayed)).isDirectory()).toBe(true);
  });
});
