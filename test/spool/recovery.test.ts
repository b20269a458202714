// Recovery at queue start (src/spool/recovery.ts) on real directories: temp names cleaned, run/ back to que/, que/ loaded in id order, unreadable msgs to err/, what it writes fsynced before its moves.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST, ls, perTestSpool, walk } from '../helpers/temp-spool.js';
import { recoverSpool } from '../../src/spool/recovery.js';

const s = perTestSpool('test', Date.UTC(2026, 10, 21, 16, 43, 46, 613));

describe('recover', () => {
  it('cleans temp names, returns run/ to que/, loads que/ and sends unreadable msgs to err/', async () => {
    const prepA = (await s.spool.create({ dest: 'test' }, { commit: false })).msg_id;
    s.clock += 1;
    const prepB = (await s.spool.create({ dest: 'test' }, { commit: false })).msg_id;
    const queued = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const running = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const broken = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const noDue = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const runDir = await s.spool.move(running, 'que', 'run', { actor: 'dispatcher', durable: false });
    await fs.writeFile(path.join(runDir, 'pid'), '999999');
    await fs.writeFile(path.join(runDir, 'status.tmp'), 'half');
    await fs.mkdir(path.join(runDir, 'job'));
    await fs.writeFile(path.join(runDir, 'job', 'script-owned.tmp'), 'the script keeps this');
    await fs.mkdir(path.join(s.spool.paths.state.prep, '_20261121.1643.46.613.1.2'));
    await fs.mkdir(path.join(s.spool.paths.state.prep, '_del.1.2'));
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await s.spool.checkpoint();
    await fs.writeFile(path.join(s.spool.msgDir('que', broken), 'msg'), '{"half');
    await fs.writeFile(path.join(s.spool.msgDir('que', queued), 'msg.tmp'), '{}');
    const m = await s.spool.readMessage('que', noDue);
    delete (m as Record<string, unknown>).due;
    await fs.writeFile(path.join(s.spool.msgDir('que', noDue), 'msg'), JSON.stringify(m));

    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const seen: string[] = [];
    const rec = await recoverSpool(fresh, async (id) => void seen.push(id));
    expect(seen).toEqual([running]);
    expect(rec.requeued).toEqual([running]);
    expect(rec.broken).toEqual([broken]);
    expect(rec.prep).toEqual([prepA, prepB].sort().reverse());
    expect(rec.que.map((q) => q.msg_id).sort()).toEqual([queued, running, noDue].sort());
    expect(rec.que.find((q) => q.msg_id === noDue)?.due).toBe(Math.floor(s.clock / 1000));
    expect((await fresh.readMessage('que', noDue)).due).toBe(Math.floor(s.clock / 1000));

    expect(await ls(fresh.paths.state.prep)).toEqual([prepA, prepB].sort());
    expect(await ls(fresh.paths.state.run)).toEqual([]);
    expect(await fresh.locate(broken)).toBe('err');
    expect((await fresh.readStatus('err', broken))?.job_status).toMatch(/^unreadable msg at recovery: /);
    const requeuedDir = fresh.msgDir('que', running);
    expect(await ls(requeuedDir)).toEqual(['history', 'job', 'msg']);
    expect(await fs.readFile(path.join(requeuedDir, 'job', 'script-owned.tmp'), 'utf8')).toBe('the script keeps this');
    expect((await fresh.readHistory('que', running)).at(-1)).toMatchObject({ from: 'run', to: 'que', actor: 'recovery', reason: 'interrupted' });
    expect((await walk(s.root)).filter((p) => p.endsWith('.tmp') && !p.includes(`${path.sep}job${path.sep}`))).toEqual([]);
  });

  it('a due that is a numeric string is read as its number and written back; one that is no number becomes now', async () => {
    const numeric = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const garbage = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const numberDue = (await s.spool.create({ dest: 'test', due: 1234 }, { commit: true })).msg_id;
    for (const [id, due] of [
      [numeric, '1700000000'],
      [garbage, 'soon'],
    ] as const) {
      const m = await s.spool.readMessage('que', id);
      await fs.writeFile(path.join(s.spool.msgDir('que', id), 'msg'), JSON.stringify({ ...m, due }));
    }
    s.clock += 5000;
    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock });
    const rec = await recoverSpool(fresh);
    const due = (id: string) => rec.que.find((q) => q.msg_id === id)?.due;
    expect(due(numeric)).toBe(1_700_000_000);
    expect(due(garbage)).toBe(Math.floor(s.clock / 1000));
    expect(due(numberDue)).toBe(1234);
    expect((await fresh.readMessage('que', numeric)).due).toBe(1_700_000_000);
    expect((await fresh.readMessage('que', garbage)).due).toBe(Math.floor(s.clock / 1000));
  });

  it('removes blank dirs made ahead and the temp files of messages in prep and err', async () => {
    const inPrep = (await s.spool.create({ dest: 'test' }, { commit: false })).msg_id;
    const inErr = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await s.spool.move(inErr, 'que', 'err', { actor: 'test' });
    for (const dir of [s.spool.msgDir('prep', inPrep), s.spool.msgDir('err', inErr)]) await fs.writeFile(path.join(dir, 'msg.tmp'), '{}');
    await fs.mkdir(path.join(s.spool.paths.dir, '.blank', '3'), { recursive: true });
    await recoverSpool(s.spool);
    expect(await ls(s.spool.msgDir('prep', inPrep))).toEqual(['msg']);
    expect(await ls(s.spool.msgDir('err', inErr))).toEqual(['history', 'msg']);
    expect(await ls(s.spool.paths.dir)).not.toContain('.blank');
  });

  it('loads que/ in id order, and rewrites only the msgs it changed; what it writes to finish a message is fsynced before the move', async () => {
    const ids: string[] = [];
    // Made newest id first: a small directory lists its entries in the order they were made.
    for (let i = 0; i < 5; i++) {
      ids.unshift((await s.spool.create({ dest: 'test' }, { commit: true })).msg_id);
      s.clock -= 1;
    }
    const [noDue, unreadable] = [ids[1], ids[3]];
    const m = await s.spool.readMessage('que', noDue);
    await fs.writeFile(path.join(s.spool.msgDir('que', noDue), 'msg'), JSON.stringify({ ...m, due: undefined }));
    // Checkpointed: the journal no longer holds these creates, so a torn msg is damage recovery meets on its own.
    await s.spool.checkpoint();
    await fs.writeFile(path.join(s.spool.msgDir('que', unreadable), 'msg'), '{"half');

    const rec = recordingFs(s.root);
    const fresh = new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock, fs: rec.fs });
    const loaded = await recoverSpool(fresh);
    expect(loaded.que.map((q) => q.msg_id)).toEqual(ids.filter((id) => id !== unreadable));
    const rel = (...p: string[]) => path.relative(s.root, path.join(...p));
    // Only the msg without a due was written again (msg.tmp renamed over msg).
    expect(rec.only('rename').filter((l) => l.includes(`${path.sep}msg`))).toEqual([
      `rename ${rel(fresh.msgDir('que', noDue), 'msg.tmp')} -> ${rel(fresh.msgDir('que', noDue), 'msg')}`,
    ]);
    const status = rel(fresh.msgDir('que', unreadable), 'status');
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeGreaterThan(-1);
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeLessThan(rec.log.findIndex((l) => l.startsWith(`rename ${rel(fresh.msgDir('que', unreadable))} ->`)));
    expect((await fresh.readHistory('err', unreadable)).at(-1)).toMatchObject({ from: 'que', to: 'err', actor: 'recovery', reason: 'unreadable msg' });
  });

  it('the status of a run finished at load is fsynced before its move to err/', async () => {
    const id = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    await fs.writeFile(path.join(s.spool.msgDir('run', id), 'cancel'), '{}');
    const rec = recordingFs(s.root);
    await recoverSpool(new QueueSpool(s.root, 'test', { host: HOST, now: () => s.clock, fs: rec.fs }));
    const status = path.relative(s.root, path.join(s.spool.msgDir('run', id), 'status'));
    const moved = rec.log.findIndex((l) => l.startsWith(`rename ${path.relative(s.root, s.spool.msgDir('run', id))} ->`));
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeGreaterThan(-1);
    expect(rec.log.indexOf(`fsynced ${status}`)).toBeLessThan(moved);
  });

  it('creates missing state dirs', async () => {
    await fs.rm(s.spool.paths.state.relayed, { recursive: true });
    await recoverSpool(s.spool);
    expect((await fs.stat(s.spool.paths.state.relayed)).isDirectory()).toBe(true);
  });
});
