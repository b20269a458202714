// QueueSpool moves on real directories: the renames between states, their history lines, hooks and syncs, and moves that fail.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { State } from '../../src/message/states.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { HOST, caught, ls, perTestSpool } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
const s = perTestSpool('test', T0);

describe('state moves', () => {
  it('prep → que → run → done, locate after each, done in a hash dir', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: false });
    expect(await s.spool.locate(id)).toBe('prep');
    await s.spool.commit(id);
    expect(await s.spool.locate(id)).toBe('que');
    const runDir = await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect(runDir).toBe(path.join(s.spool.paths.state.run, id));
    expect(await s.spool.locate(id)).toBe('run');
    s.clock += 1000;
    const doneDir = await s.spool.move(id, 'run', 'done', { actor: 'script', reason: 'exit 0' });
    expect(doneDir).toBe(path.join(s.spool.paths.state.done, '20261121', '16', '43', id));
    expect(s.spool.msgDir('done', id)).toBe(doneDir);
    expect(await s.spool.locate(id)).toBe('done');
    expect(await s.spool.exists('done', id)).toBe(true);
    for (const st of ['prep', 'que', 'run'] as const) expect(await ls(s.spool.paths.state[st])).toEqual([]);
    expect(await s.spool.readMessage('done', id)).toMatchObject({ msg_id: id });
    const history = await s.spool.readHistory('done', id);
    expect(history.map((h) => [h.from, h.to, h.actor, h.reason])).toEqual([
      [null, 'prep', 'create', undefined],
      ['prep', 'que', 'commit', undefined],
      ['que', 'run', 'dispatcher', undefined],
      ['run', 'done', 'script', 'exit 0'],
    ]);
    expect(history[3].at).toBe(new Date(T0 + 1000).toISOString());
  });

  it('run → relayed lands in a hash dir', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher' });
    const dir = await s.spool.move(id, 'run', 'relayed', { actor: 'script' });
    expect(dir).toBe(path.join(s.spool.paths.state.relayed, '20261121', '16', '43', id));
    expect(await s.spool.locate(id)).toBe('relayed');
    expect(await s.spool.listHashed('relayed', 10)).toEqual([id]);
    expect(await s.spool.count('relayed')).toBe(1);
  });

  it('run → err and run → que (resend)', async () => {
    const a = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const b = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    for (const id of [a, b]) await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect((await s.spool.listFlat('run')).sort()).toEqual([a, b].sort());
    await s.spool.move(a, 'run', 'err', { actor: 'script', reason: 'exit 1' });
    await s.spool.move(b, 'run', 'que', { actor: 'script', reason: 'resend 0' });
    expect(await s.spool.locate(a)).toBe('err');
    expect(await s.spool.locate(b)).toBe('que');
    expect(await s.spool.listFlat('run')).toEqual([]);
    expect(await s.spool.count('err')).toBe(1);
    expect(await s.spool.count('que')).toBe(1);
    expect((await s.spool.readHistory('que', b)).at(-1)).toMatchObject({ from: 'run', to: 'que', reason: 'resend 0' });
  });

  it('a move of a message that is not there fails with RQ_ERR_DISK naming the move, and changes nothing', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const err = await caught(s.spool.move(id, 'run', 'err', { actor: 'test' }));
    expect(err.code).toBe('RQ_ERR_DISK');
    expect(err.message).toMatch(new RegExp(`^move ${id} from run to err failed: .*ENOENT`));
    expect(await s.spool.locate(id)).toBe('que');
  });

  it('many concurrent moves into one new minute dir all land', async () => {
    const ids = (await Promise.all(Array.from({ length: 50 }, () => s.spool.create({ dest: 'test' }, { commit: true })))).map((m) => m.msg_id);
    await Promise.all(ids.map((id) => s.spool.move(id, 'que', 'done', { actor: 'test' })));
    expect(await s.spool.count('done')).toBe(50);
    expect((await s.spool.listHashed('done', 100)).sort()).toEqual([...ids].sort());
  });

  it('re-creates a minute dir removed behind its back (cleaner)', async () => {
    const a = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const b = (await s.spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await s.spool.move(a, 'que', 'done', { actor: 'test' });
    await s.spool.remove('done', a);
    await fs.rm(path.join(s.spool.paths.state.done, '20261121'), { recursive: true });
    await s.spool.move(b, 'que', 'done', { actor: 'test' });
    expect(await s.spool.locate(b)).toBe('done');
  });
});

describe('moves: what goes with them', () => {
  it('a move whose history line comes later writes none itself', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher', lineLater: true });
    // Only the create entry its id implies.
    expect(await s.spool.readHistory('run', id)).toMatchObject([{ from: null, actor: 'create' }]);
  });

  it('tells beforeFinish of every finish and delete, before the rename; not of other moves', async () => {
    const calls: string[] = [];
    const spool: QueueSpool = new QueueSpool(s.spool.root, 'test', {
      host: HOST,
      now: () => s.clock,
      beforeFinish: async (id, from, to) => {
        calls.push(`${id.slice(-3)} ${from} -> ${to}, still in ${await spool.locate(id)}`);
      },
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await spool.create({ dest: 'test' }, { commit: true })).msg_id);
    const [a, b, c] = ids;
    await spool.move(a, 'que', 'run', { actor: 'dispatcher' });
    await spool.move(a, 'run', 'done', { actor: 'script' });
    await spool.move(b, 'que', 'err', { actor: 'test' });
    await spool.move(b, 'err', 'done', { actor: 'test' });
    await spool.remove('que', c);
    expect(calls).toEqual([
      `${a.slice(-3)} run -> done, still in run`,
      `${b.slice(-3)} que -> err, still in que`,
      `${c.slice(-3)} que -> deleted, still in que`,
    ]);
  });

  it('a history line that cannot be written is reported, and the move stands', async () => {
    const failures: Error[] = [];
    // The history append's open fails as a broken disk's would (EIO); every other call goes through.
    const historyFails = {
      ...nodeSpoolFs,
      openSync: (p: string, flags: string | number, mode?: number) => {
        if (path.basename(p) === 'history') throw Object.assign(new Error(`EIO: i/o error, open '${p}'`), { code: 'EIO' });
        return nodeSpoolFs.openSync(p, flags, mode);
      },
    };
    const spool = new QueueSpool(s.spool.root, 'test', { host: HOST, now: () => s.clock, fs: historyFails, onHistoryError: (err) => void failures.push(err) });
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    await spool.move(id, 'que', 'err', { actor: 'test' });
    expect(await spool.locate(id)).toBe('err');
    expect(failures.map((e) => e.message)).toEqual([expect.stringMatching(new RegExp(`^history line in ${spool.msgDir('err', id)} failed: .*EIO`))]);
  });

  it('a sync after a move that fails is a disk error naming the move', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    const moved = await s.spool.beginMove(id, 'que', 'done', { actor: 'test' });
    // The minute dir the message went to is gone before its fsync.
    await fs.rm(path.dirname(moved.dir), { recursive: true });
    const err = await caught(moved.sync());
    expect(err.code).toBe('RQ_ERR_DISK');
    expect(err.message).toMatch(new RegExp(`^sync after moving ${id} to done failed: .*ENOENT`));
  });

  it('a move into a state dir that is missing, or is no directory, fails once and leaves the message where it was', async () => {
    for (const [state, spoil] of [
      ['err', (dir: string) => fs.rm(dir, { recursive: true })],
      [
        'run',
        async (dir: string) => {
          await fs.rm(dir, { recursive: true });
          await fs.writeFile(dir, 'not a directory');
        },
      ],
    ] as Array<[State, (dir: string) => Promise<void>]>) {
      const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
      await spoil(s.spool.paths.state[state]);
      const err = await caught(s.spool.move(id, 'que', state, { actor: 'test' }));
      expect(err.code, state).toBe('RQ_ERR_DISK');
      expect(err.message.startsWith(`move ${id} from que to ${state} failed: `), state).toBe(true);
      expect(await s.spool.locate(id), state).toBe('que');
    }
  });
});
