// QueueSpool's lookups and listings on real directories: where a message is, which names count as ids, acked errs, hash dirs, removal.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { ackErrs } from '../../src/spool/err-acks.js';
import { ls, perTestSpool } from '../helpers/temp-spool.js';

const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);
const s = perTestSpool('test', T0);

describe('locate, exists, readHistory', () => {
  it('locate refuses malformed ids and finds nothing for unknown ones', async () => {
    expect(await s.spool.locate('../etc')).toBeNull();
    expect(await s.spool.locate('20261121.1643.46.613.1')).toBeNull();
    expect(() => s.spool.msgDir('done', 'garbage')).toThrow(RqError);
    expect(() => s.spool.msgDir('done', 'garbage')).toThrow('msg_id: garbage has no date prefix for done/');
  });

  it('an id that walks out of its state dir finds nothing, not the message it points at', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    await s.spool.move(id, 'que', 'run', { actor: 'dispatcher' });
    const sideways = `../run/${id}`;
    expect(await s.spool.exists('que', sideways)).toBe(false);
    expect(await s.spool.locate(sideways)).toBeNull();
    expect(await s.spool.readHistory('que', sideways)).toEqual([]);
    expect(await s.spool.exists('run', id)).toBe(true);
    expect(await s.spool.readHistory('run', id)).toHaveLength(2);
  });

  it('a dotted (acked) id is only ever in err/: a dotted entry elsewhere is no message', async () => {
    const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
    await fs.rename(s.spool.msgDir('que', id), path.join(s.spool.paths.state.que, `.${id}`));
    expect(await s.spool.exists('que', `.${id}`)).toBe(false);
    expect(await s.spool.locate(`.${id}`)).toBeNull();
  });

  it('the acked listing of err/ holds only dotted ids: not the unacked, not other dotted names', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
      await s.spool.move(id, 'que', 'err', { actor: 'test' });
      ids.push(id);
    }
    await ackErrs(s.spool);
    const { msg_id: unacked } = await s.spool.create({ dest: 'test' }, { commit: true });
    await s.spool.move(unacked, 'que', 'err', { actor: 'test' });
    for (const junk of ['.nfs0001', `x${ids[0]}`]) await fs.mkdir(path.join(s.spool.paths.state.err, junk));
    expect((await s.spool.listFlat('err', true)).sort()).toEqual(ids.map((id) => `.${id}`).sort());
    expect(await s.spool.listFlat('err')).toEqual([unacked]);
  });
});

describe('remove and ack', () => {
  it('removes messages from prep, que, err, acked err and done without leaving anything', async () => {
    const ids: Record<string, string> = {};
    for (const st of ['prep', 'que', 'err', 'acked', 'done'] as const) ids[st] = (await s.spool.create({ dest: 'test' }, { commit: st !== 'prep' })).msg_id;
    await s.spool.move(ids.acked, 'que', 'err', { actor: 'test' });
    await ackErrs(s.spool);
    await s.spool.move(ids.err, 'que', 'err', { actor: 'test' });
    await s.spool.move(ids.done, 'que', 'done', { actor: 'test' });
    await s.spool.remove('prep', ids.prep);
    await s.spool.remove('que', ids.que);
    await s.spool.remove('err', ids.err);
    await s.spool.remove('err', `.${ids.acked}`);
    await s.spool.remove('done', ids.done);
    for (const id of Object.values(ids)) expect(await s.spool.locate(id)).toBeNull();
    expect(await s.spool.locate(`.${ids.acked}`)).toBeNull();
    for (const st of ['prep', 'que', 'run', 'err'] as const) expect(await ls(s.spool.paths.state[st]), st).toEqual([]);
    expect(await s.spool.count('done')).toBe(0);
  });

  it('ackErrs renames err/<id> to err/.<id>', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const { msg_id: id } = await s.spool.create({ dest: 'test' }, { commit: true });
      await s.spool.move(id, 'que', 'err', { actor: 'test' });
      ids.push(id);
    }
    const acked = await ackErrs(s.spool);
    expect(acked.ids.sort()).toEqual([...ids].sort());
    expect(acked.failed).toEqual([]);
    expect(await s.spool.listFlat('err')).toEqual([]);
    expect((await s.spool.listFlat('err', true)).sort()).toEqual(ids.map((id) => `.${id}`).sort());
    expect(await s.spool.count('err')).toBe(0);
    expect(await s.spool.exists('err', `.${ids[0]}`)).toBe(true);
    expect(await s.spool.exists('que', `.${ids[0]}`)).toBe(false);
    expect(await s.spool.locate(`.${ids[0]}`)).toBe('err');
    expect(await s.spool.readMessage('err', `.${ids[0]}`)).toMatchObject({ msg_id: ids[0] });
    expect(await ackErrs(s.spool)).toEqual({ ids: [], failed: [] });
  });
});

describe('hash dirs: count and listHashed', () => {
  it('lists the 54 ids of test_hashdir.rb newest first and honours the limit', async () => {
    const ids: string[] = [];
    for (let d = 1; d <= 9; d++) {
      for (let h = 10; h <= 15; h++) {
        const id = `2010090${d}.${h}22.01.123.456789`;
        ids.push(id);
        await fs.mkdir(s.spool.msgDir('done', id), { recursive: true });
      }
    }
    // Noise the walk must skip.
    await fs.mkdir(path.join(s.spool.paths.state.done, 'notaday'), { recursive: true });
    await fs.mkdir(path.join(s.spool.paths.state.done, '20100901', 'x1'), { recursive: true });
    await fs.writeFile(path.join(s.spool.paths.state.done, '20100901', '10', '22', '.hidden'), '');
    expect(await s.spool.count('done')).toBe(54);
    const all = await s.spool.listHashed('done', 100);
    expect(all).toHaveLength(54);
    expect(all[0]).toBe('20100909.1522.01.123.456789');
    expect(all[1]).toBe('20100909.1422.01.123.456789');
    expect(all[5]).toBe('20100909.1022.01.123.456789');
    expect(all[6]).toBe('20100908.1522.01.123.456789');
    expect(all[53]).toBe('20100901.1022.01.123.456789');
    expect(all).toEqual([...ids].sort().reverse());
    expect(await s.spool.listHashed('done', 7)).toEqual(all.slice(0, 7));
    expect(await s.spool.listHashed('done', 1)).toEqual([all[0]]);
    expect(await s.spool.listHashed('done', 0)).toEqual([]);
    expect(await s.spool.count('relayed')).toBe(0);
    expect(await s.spool.listHashed('relayed', 10)).toEqual([]);
    for (const id of [ids[0], ids[53]]) expect(await s.spool.locate(id)).toBe('done');
  });
});
