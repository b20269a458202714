// QueueSpool on real directories: ids, creates, state moves, status, history, delete, acks, hash dirs, clone, failures.
import { readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATES } from '../../src/message/states.js';
import { RqError } from '../../src/errors.js';
import { normaliseCreate, pickFields } from '../../src/message/message.js';
import { ackErrs } from '../../src/spool/err-acks.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST, type TempSpool, isRoot, ls, tempSpool, walk } from '../helpers/temp-spool.js';

const ID_RE = /^\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/;
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

async function caught(p: Promise<unknown>): Promise<RqError> {
  try {
    await p;
  } catch (err) {
    return err as RqError;
  }
  throw new Error('expected a rejection');
}

describe('create', () => {
  it('allocates classic ids, unique under a burst of 1,000 concurrent creates', async () => {
    const real = await tempSpool('burst'); // real clock: many creates share a millisecond
    try {
      const msgs = await Promise.all(Array.from({ length: 1000 }, (_, i) => real.spool.create({ dest: 'burst', param1: String(i) }, { commit: i % 2 === 0 })));
      const ids = msgs.map((m) => m.msg_id);
      for (const id of ids) expect(id).toMatch(ID_RE);
      expect(new Set(ids).size).toBe(1000);
      expect((await ls(real.spool.paths.state.que)).length).toBe(500);
      expect((await ls(real.spool.paths.state.prep)).length).toBe(500);
      for (const [i, m] of msgs.entries()) {
        const state = i % 2 === 0 ? 'que' : 'prep';
        const onDisk = JSON.parse(await fs.readFile(path.join(real.spool.msgDir(state, m.msg_id), 'msg'), 'utf8'));
        expect(onDisk).toMatchObject({ msg_id: m.msg_id, param1: String(i) });
      }
      expect((await ls(real.spool.paths.state.prep)).filter((n) => n.startsWith('_'))).toEqual([]);
    } finally {
      await real.cleanup();
    }
  });

  it('the id is the UTC stamp of the clock plus the inode of the message dir', async () => {
    const msg = await spool.create({ dest: 'test' }, { commit: true });
    expect(msg.msg_id.startsWith('20261121.1643.46.613.')).toBe(true);
    const { ino } = await fs.stat(spool.msgDir('que', msg.msg_id));
    expect(msg.msg_id).toBe(`20261121.1643.46.613.${ino}`);
  });

  it('with commit lands in que/ with the default fields', async () => {
    const msg = await spool.create({ dest: 'test', src: 'me', param1: 'p1' }, { commit: true });
    expect(await spool.locate(msg.msg_id)).toBe('que');
    expect(await ls(spool.paths.state.prep)).toEqual([]);
    const stored = await spool.readMessage('que', msg.msg_id);
    expect(stored).toEqual({
      dest: 'test',
      src: 'me',
      param1: 'p1',
      msg_id: msg.msg_id,
      orig_msg_id: `http://127.0.0.1:3333/q/test/${msg.msg_id}`,
      count: 0,
      max_count: 15,
      due: Math.floor(T0 / 1000),
    });
    expect(stored).toEqual(msg);
    // The create entry of the history is implied by the id: no history file is written on the hot path.
    expect(await ls(spool.msgDir('que', msg.msg_id))).toEqual(['msg']);
    expect(await spool.readHistory('que', msg.msg_id)).toEqual([{ at: new Date(T0).toISOString(), from: null, to: 'que', actor: 'create' }]);
  });

  it('without commit lands in prep/ and keeps caller values', async () => {
    const msg = await spool.create({ dest: 'other', orig_msg_id: 'http://x:1/q/a/1', count: 3, max_count: 4, due: 5 }, { commit: false, extra: { cloned_from: 'abc' } });
    expect(await spool.locate(msg.msg_id)).toBe('prep');
    expect(await spool.readMessage('prep', msg.msg_id)).toMatchObject({ dest: 'other', orig_msg_id: 'http://x:1/q/a/1', count: 3, max_count: 4, due: 5, cloned_from: 'abc' });
    expect(await spool.listFlat('prep')).toEqual([msg.msg_id]);
    expect(await spool.readHistory('prep', msg.msg_id)).toMatchObject([{ from: null, to: 'prep', actor: 'create' }]);
  });

  it('a create without dest is refused with the classic text and leaves nothing in prep', async () => {
    const err = await caught((async () => spool.create(normaliseCreate({ src: 'x', param1: 'y' }), { commit: true }))());
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_MISSING_DEST');
    expect(err.message).toBe('input missing required \"dest\" parameter');
    for (const s of STATES) expect(await ls(spool.paths.state[s]), s).toEqual([]);
  });

  it('a create that fails on disk leaves no temp dir and throws RQ_ERR_DISK', async () => {
    const que = spool.paths.state.que;
    let restore: () => Promise<void>;
    if (isRoot()) {
      // root writes through permission bits: make the rename into que/ fail by making que/ a file.
      await fs.rm(que, { recursive: true });
      await fs.writeFile(que, 'not a directory');
      restore = async () => {
        await fs.rm(que);
        await fs.mkdir(que);
      };
    } else {
      await fs.chmod(que, 0o500);
      restore = () => fs.chmod(que, 0o755);
    }
    try {
      const err = await caught(spool.create({ dest: 'test' }, { commit: true }));
      expect(err).toBeInstanceOf(RqError);
      expect(err.code).toBe('RQ_ERR_DISK');
      expect(err.status).toBe(507);
      expect(err.message).toMatch(/^create message failed: /);
      expect(await ls(spool.paths.state.prep)).toEqual([]);
    } finally {
      await restore();
    }
    // The spool works again once the disk does.
    const ok = await spool.create({ dest: 'test' }, { commit: true });
    expect(await spool.locate(ok.msg_id)).toBe('que');
  });

  it('a create whose journal step (before) fails throws that failure and leaves no temp dir', async () => {
    const journal = new Error('tag journal: no space left');
    const err = await caught(spool.create({ dest: 'test' }, { commit: true, before: async () => Promise.reject(journal) }));
    expect(err).toBe(journal);
    for (const s of STATES) expect(await ls(spool.paths.state[s]), s).toEqual([]);
    // The next create, with a before that succeeds, lands.
    const ok = await spool.create({ dest: 'test' }, { commit: true, before: async () => undefined });
    expect(await spool.locate(ok.msg_id)).toBe('que');
  });
});

describe('create: descriptors', () => {
  // Each create opens its msg file and its directory (kept for the fsyncs); a long-running queue
  // process that kept them would run out of descriptors after a few thousand messages.
  const openFds = () => readdirSync('/proc/self/fd').length;

  it('closes every descriptor it opened once the message is durable', async () => {
    await spool.create({ dest: 'test' }, { commit: true }); // warm up: lazily opened handles of the spool itself
    const before = openFds();
    for (let i = 0; i < 20; i++) await spool.create({ dest: 'test' }, { commit: i % 2 === 0 });
    expect(openFds()).toBe(before);
  });

  it('closes every descriptor it opened when the create fails on disk', async () => {
    await spool.create({ dest: 'test' }, { commit: true });
    const before = openFds();
    // The rename into que/ fails after both descriptors are open: que/ is a file now.
    const que = spool.paths.state.que;
    await fs.rename(que, `${que}.away`);
    await fs.writeFile(que, 'not a directory');
    try {
      for (let i = 0; i < 20; i++) expect((await caught(spool.create({ dest: 'test' }, { commit: true }))).code).toBe('RQ_ERR_DISK');
      expect(openFds()).toBe(before);
    } finally {
      await fs.rm(que);
      await fs.rename(`${que}.away`, que);
    }
  });
});

describe('state moves', () => {
  it('prep → que → run → done, locate after each, done in a hash dir', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: false });
    expect(await spool.locate(id)).toBe('prep');
    await spool.commit(id);
    expect(await spool.locate(id)).toBe('que');
    const runDir = await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect(runDir).toBe(path.join(spool.paths.state.run, id));
    expect(await spool.locate(id)).toBe('run');
    clock += 1000;
    const doneDir = await spool.move(id, 'run', 'done', { actor: 'script', reason: 'exit 0' });
    expect(doneDir).toBe(path.join(spool.paths.state.done, '20261121', '16', '43', id));
    expect(spool.msgDir('done', id)).toBe(doneDir);
    expect(await spool.locate(id)).toBe('done');
    expect(await spool.exists('done', id)).toBe(true);
    for (const s of ['prep', 'que', 'run'] as const) expect(await ls(spool.paths.state[s])).toEqual([]);
    expect(await spool.readMessage('done', id)).toMatchObject({ msg_id: id });
    const history = await spool.readHistory('done', id);
    expect(history.map((h) => [h.from, h.to, h.actor, h.reason])).toEqual([
      [null, 'prep', 'create', undefined],
      ['prep', 'que', 'commit', undefined],
      ['que', 'run', 'dispatcher', undefined],
      ['run', 'done', 'script', 'exit 0'],
    ]);
    expect(history[3].at).toBe(new Date(T0 + 1000).toISOString());
  });

  it('run → relayed lands in a hash dir', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    await spool.move(id, 'que', 'run', { actor: 'dispatcher' });
    const dir = await spool.move(id, 'run', 'relayed', { actor: 'script' });
    expect(dir).toBe(path.join(spool.paths.state.relayed, '20261121', '16', '43', id));
    expect(await spool.locate(id)).toBe('relayed');
    expect(await spool.listHashed('relayed', 10)).toEqual([id]);
    expect(await spool.count('relayed')).toBe(1);
  });

  it('run → err and run → que (resend)', async () => {
    const a = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const b = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    for (const id of [a, b]) await spool.move(id, 'que', 'run', { actor: 'dispatcher', durable: false });
    expect((await spool.listFlat('run')).sort()).toEqual([a, b].sort());
    await spool.move(a, 'run', 'err', { actor: 'script', reason: 'exit 1' });
    await spool.move(b, 'run', 'que', { actor: 'script', reason: 'resend 0' });
    expect(await spool.locate(a)).toBe('err');
    expect(await spool.locate(b)).toBe('que');
    expect(await spool.listFlat('run')).toEqual([]);
    expect(await spool.count('err')).toBe(1);
    expect(await spool.count('que')).toBe(1);
    expect((await spool.readHistory('que', b)).at(-1)).toMatchObject({ from: 'run', to: 'que', reason: 'resend 0' });
  });

  it('a move of a message that is not there fails with RQ_ERR_DISK and changes nothing', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    const err = await caught(spool.move(id, 'run', 'err', { actor: 'test' }));
    expect(err.code).toBe('RQ_ERR_DISK');
    expect(await spool.locate(id)).toBe('que');
  });

  it('many concurrent moves into one new minute dir all land', async () => {
    const ids = (await Promise.all(Array.from({ length: 50 }, () => spool.create({ dest: 'test' }, { commit: true })))).map((m) => m.msg_id);
    await Promise.all(ids.map((id) => spool.move(id, 'que', 'done', { actor: 'test' })));
    expect(await spool.count('done')).toBe(50);
    expect((await spool.listHashed('done', 100)).sort()).toEqual([...ids].sort());
  });

  it('re-creates a minute dir removed behind its back (cleaner)', async () => {
    const a = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    const b = (await spool.create({ dest: 'test' }, { commit: true })).msg_id;
    await spool.move(a, 'que', 'done', { actor: 'test' });
    await spool.remove('done', a);
    await fs.rm(path.join(spool.paths.state.done, '20261121'), { recursive: true });
    await spool.move(b, 'que', 'done', { actor: 'test' });
    expect(await spool.locate(b)).toBe('done');
  });

  it('locate refuses malformed ids and finds nothing for unknown ones', async () => {
    expect(await spool.locate('../etc')).toBeNull();
    expect(await spool.locate('20261121.1643.46.613.1')).toBeNull();
    expect(() => spool.msgDir('done', 'garbage')).toThrow(RqError);
  });
});

describe('message and status files', () => {
  it('writeMessage strips derived fields and replaces msg atomically', async () => {
    const msg = await spool.create({ dest: 'test' }, { commit: true });
    const dir = spool.msgDir('que', msg.msg_id);
    await spool.writeMessage('que', msg.msg_id, {
      ...msg,
      param1: 'changed',
      path: 'queue/test/que/x',
      state: 'que',
      status: 'que - hi',
      _attachments: { a: { md5: 'x', size: 1, path: '/x' } },
    });
    const onDisk = JSON.parse(await fs.readFile(path.join(dir, 'msg'), 'utf8'));
    expect(onDisk).toEqual({ ...msg, param1: 'changed' });
    for (const f of ['path', 'state', 'status', '_attachments']) expect(onDisk).not.toHaveProperty(f);
    expect(await ls(dir)).toEqual(['msg']);
  });

  it('readMessage rejects a msg that is not a message object', async () => {
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    await fs.writeFile(path.join(spool.msgDir('que', id), 'msg'), '[1,2]');
    await expect(spool.readMessage('que', id)).rejects.toThrow(/not a message object/);
  });

  it('status: write (cheap and durable), read, null text, missing, corrupt', async () => {
    const rec = recordingFs(t.root);
    const spool = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock, fs: rec.fs });
    const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
    const dir = spool.msgDir('que', id);
    const status = path.relative(t.root, path.join(dir, 'status'));
    expect(await spool.readStatus('que', id)).toBeNull();
    rec.clear();
    await spool.writeStatus(dir, 'working 1/3');
    expect(await spool.readStatus('que', id)).toEqual({ job_status: 'working 1/3' });
    expect(await fs.readFile(path.join(dir, 'status'), 'utf8')).toBe('{"job_status":"working 1/3"}');
    // Cheap: written in place, never fsynced.
    expect(rec.only('write', 'fsync')).toEqual([`write ${status}`]);
    rec.clear();
    await spool.writeStatus(dir, 'done sleeping', true);
    expect(await spool.readStatus('que', id)).toEqual({ job_status: 'done sleeping' });
    // Durable: the same inode, overwritten and fsynced.
    expect(rec.only('truncate', 'write', 'fsync', 'fsynced')).toEqual([`truncate ${status}`, `write ${status}`, `fsync ${status}`, `fsynced ${status}`]);
    await spool.writeStatus(dir, null);
    expect(await spool.readStatus('que', id)).toEqual({ job_status: null });
    await fs.writeFile(path.join(dir, 'status'), '{"job_status": 42}');
    expect(await spool.readStatus('que', id)).toEqual({ job_status: null });
    await fs.writeFile(path.join(dir, 'status'), '{broken');
    expect(await spool.readStatus('que', id)).toBeNull();
    expect((await ls(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

});

describe('remove and ack', () => {
  it('removes messages from prep, que, err, acked err and done without leaving anything', async () => {
    const ids: Record<string, string> = {};
    for (const s of ['prep', 'que', 'err', 'acked', 'done'] as const) ids[s] = (await spool.create({ dest: 'test' }, { commit: s !== 'prep' })).msg_id;
    await spool.move(ids.acked, 'que', 'err', { actor: 'test' });
    await ackErrs(spool);
    await spool.move(ids.err, 'que', 'err', { actor: 'test' });
    await spool.move(ids.done, 'que', 'done', { actor: 'test' });
    await spool.remove('prep', ids.prep);
    await spool.remove('que', ids.que);
    await spool.remove('err', ids.err);
    await spool.remove('err', `.${ids.acked}`);
    await spool.remove('done', ids.done);
    for (const id of Object.values(ids)) expect(await spool.locate(id)).toBeNull();
    expect(await spool.locate(`.${ids.acked}`)).toBeNull();
    for (const s of ['prep', 'que', 'run', 'err'] as const) expect(await ls(spool.paths.state[s]), s).toEqual([]);
    expect(await spool.count('done')).toBe(0);
  });

  it('ackErrs renames err/<id> to err/.<id>', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) {
      const { msg_id: id } = await spool.create({ dest: 'test' }, { commit: true });
      await spool.move(id, 'que', 'err', { actor: 'test' });
      ids.push(id);
    }
    expect(await ackErrs(spool)).toHaveLength(3);
    expect(await spool.listFlat('err')).toEqual([]);
    expect((await spool.listFlat('err', true)).sort()).toEqual(ids.map((id) => `.${id}`).sort());
    expect(await spool.count('err')).toBe(0);
    expect(await spool.exists('err', `.${ids[0]}`)).toBe(true);
    expect(await spool.exists('que', `.${ids[0]}`)).toBe(false);
    expect(await spool.locate(`.${ids[0]}`)).toBe('err');
    expect(await spool.readMessage('err', `.${ids[0]}`)).toMatchObject({ msg_id: ids[0] });
    expect(await ackErrs(spool)).toEqual([]);
  });
});

describe('hash dirs: count and listHashed', () => {
  it('lists the 54 ids of test_hashdir.rb newest first and honours the limit', async () => {
    const ids: string[] = [];
    for (let d = 1; d <= 9; d++) {
      for (let h = 10; h <= 15; h++) {
        const id = `2010090${d}.${h}22.01.123.456789`;
        ids.push(id);
        await fs.mkdir(spool.msgDir('done', id), { recursive: true });
      }
    }
    // Noise the walk must skip.
    await fs.mkdir(path.join(spool.paths.state.done, 'notaday'), { recursive: true });
    await fs.mkdir(path.join(spool.paths.state.done, '20100901', 'x1'), { recursive: true });
    await fs.writeFile(path.join(spool.paths.state.done, '20100901', '10', '22', '.hidden'), '');
    expect(await spool.count('done')).toBe(54);
    const all = await spool.listHashed('done', 100);
    expect(all).toHaveLength(54);
    expect(all[0]).toBe('20100909.1522.01.123.456789');
    expect(all[1]).toBe('20100909.1422.01.123.456789');
    expect(all[5]).toBe('20100909.1022.01.123.456789');
    expect(all[6]).toBe('20100908.1522.01.123.456789');
    expect(all[53]).toBe('20100901.1022.01.123.456789');
    expect(all).toEqual([...ids].sort().reverse());
    expect(await spool.listHashed('done', 7)).toEqual(all.slice(0, 7));
    expect(await spool.listHashed('done', 1)).toEqual([all[0]]);
    expect(await spool.listHashed('done', 0)).toEqual([]);
    expect(await spool.count('relayed')).toBe(0);
    expect(await spool.listHashed('relayed', 10)).toEqual([]);
    for (const id of [ids[0], ids[53]]) expect(await spool.locate(id)).toBe('done');
  });
});

describe('clone (createWithAttachments)', () => {
  it('hard-links the attachments and copies the fields into a committed message', async () => {
    const src = path.join(t.root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const orig = await spool.create({ dest: 'test', src: 'me', param1: 'a', param2: 'b', max_count: 7, count: 3, due: 1000 }, { commit: false });
    await spool.attach(orig.msg_id, src, 'one.bin');
    await spool.attach(orig.msg_id, src, 'two.bin');
    await spool.commit(orig.msg_id);
    const fromDir = await spool.move(orig.msg_id, 'que', 'done', { actor: 'test' });

    clock += 60_000;
    const fields = { ...pickFields(orig, ['orig_msg_id', 'max_count', 'src', 'param1', 'param2', 'param3', 'param4', 'post_run_webhook', 'due', 'force_remote']), count: 0 };
    const clone = await spool.createWithAttachments(fields, fromDir, { cloned_from: orig.msg_id });
    expect(clone.msg_id).not.toBe(orig.msg_id);
    expect(await spool.locate(clone.msg_id)).toBe('que');
    const stored = await spool.readMessage('que', clone.msg_id);
    expect(stored).toEqual({
      dest: 'test',
      orig_msg_id: orig.orig_msg_id,
      src: 'me',
      param1: 'a',
      param2: 'b',
      max_count: 7,
      count: 0,
      due: 1000,
      cloned_from: orig.msg_id,
      msg_id: clone.msg_id,
    });
    const cloneDir = spool.msgDir('que', clone.msg_id);
    for (const n of ['one.bin', 'two.bin']) {
      const a = await fs.stat(path.join(fromDir, 'attach', n));
      const b = await fs.stat(path.join(cloneDir, 'attach', n));
      expect(b.ino).toBe(a.ino);
    }
    expect(Object.keys(await spool.attachments('que', clone.msg_id))).toEqual(['one.bin', 'two.bin']);
    expect(await ls(spool.paths.state.prep)).toEqual([]);
  });

  it('without a source dir it is a plain committed create', async () => {
    const clone = await spool.createWithAttachments({ dest: 'test' }, null);
    expect(await spool.locate(clone.msg_id)).toBe('que');
  });

  it('a failed link leaves nothing behind and throws RQ_ERR_DISK', async () => {
    const fromDir = path.join(t.root, 'fake-source');
    await fs.mkdir(path.join(fromDir, 'attach'), { recursive: true });
    await fs.mkdir(path.join(fromDir, 'attach', 'a-directory')); // link(2) of a directory fails
    const err = await caught(spool.createWithAttachments({ dest: 'test' }, fromDir));
    expect(err.code).toBe('RQ_ERR_DISK');
    for (const s of STATES) expect(await ls(spool.paths.state[s]), s).toEqual([]);
  });
});
