// QueueSpool creates on real directories: classic ids, where a create lands, refusals and failures on disk, temp-name retries, descriptors closed (msg, status, clone: queue-spool-files).
import { readdirSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATES } from '../../src/message/states.js';
import { RqError } from '../../src/errors.js';
import { normaliseCreate } from '../../src/message/message.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { HOST, type TempSpool, caught, isRoot, ls, tempSpool } from '../helpers/temp-spool.js';
import { eio } from './create-journal-harness.js';
import { noSpace } from '../helpers/no-space-fs.js';

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
    const msg = await spool.create(
      { dest: 'other', orig_msg_id: 'http://x:1/q/a/1', count: 3, max_count: 4, due: 5 },
      { commit: false, extra: { cloned_from: 'abc' } },
    );
    expect(await spool.locate(msg.msg_id)).toBe('prep');
    expect(await spool.readMessage('prep', msg.msg_id)).toMatchObject({
      dest: 'other',
      orig_msg_id: 'http://x:1/q/a/1',
      count: 3,
      max_count: 4,
      due: 5,
      cloned_from: 'abc',
    });
    expect(await spool.listFlat('prep')).toEqual([msg.msg_id]);
    expect(await spool.readHistory('prep', msg.msg_id)).toMatchObject([{ from: null, to: 'prep', actor: 'create' }]);
  });

  it('a create without dest is refused with the classic text and leaves nothing in prep', async () => {
    const err = await caught((async () => spool.create(normaliseCreate({ src: 'x', param1: 'y' }), { commit: true }))());
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_MISSING_DEST');
    expect(err.message).toBe('input missing required "dest" parameter');
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

describe('create: id allocation', () => {
  it('a temp name taken by another process is tried again with a fresh one, ten times, then refused naming prep/', async () => {
    const tried: string[] = [];
    const taken = {
      ...nodeSpoolFs,
      mkdirSync: (p: string) => {
        tried.push(p);
        throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${p}'`), { code: 'EEXIST' });
      },
    };
    const s = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock, fs: taken });
    const err = await caught(s.create({ dest: 'test' }, { commit: true }));
    expect(err.code).toBe('RQ_ERR_ID_ALLOCATION');
    expect(err.message).toContain(s.paths.state.prep);
    expect(err.message).toContain('EEXIST');
    expect(tried).toHaveLength(10);
    expect(new Set(tried).size).toBe(10);
    expect(await ls(s.paths.state.que)).toEqual([]);
  });
});

describe('create: descriptors', () => {
  // Each create opens its msg file and its directory (kept for the fsyncs); a long-running queue
  // process that kept them would run out of descriptors after a few thousand messages.
  const openFds = () => readdirSync('/proc/self/fd').length;

  it('closes every descriptor it opened once the message is durable', async () => {
    await spool.create({ dest: 'test' }, { commit: true }); // warm up: lazily opened handles of the spool itself
    // The journal holds its segment open until a checkpoint: compare at checkpoints.
    await spool.checkpoint();
    const before = openFds();
    for (let i = 0; i < 20; i++) await spool.create({ dest: 'test' }, { commit: i % 2 === 0 });
    await spool.checkpoint();
    // At most as many: a handle an earlier test dropped may be closed by the GC meanwhile (seen under load), never one more.
    expect(openFds()).toBeLessThanOrEqual(before);
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
      expect(openFds()).toBeLessThanOrEqual(before);
    } finally {
      await fs.rm(que);
      await fs.rename(`${que}.away`, que);
    }
  });
});

describe('create: a journal that cannot take the record', () => {
  // The message is on disk and may have run by then: a syncfs of its filesystem makes it durable
  // instead, and only when that fails too is the create refused (create.ts, withoutJournal).
  const synced: string[] = [];
  const journalRefused = (syncfs: SpoolFs['syncfs']): SpoolFs => ({
    ...nodeSpoolFs,
    open: (file, flags, mode) => (file.includes(`${path.sep}journal${path.sep}`) ? Promise.reject(noSpace()) : nodeSpoolFs.open(file, flags, mode)),
    syncfs: (dir) => {
      synced.push(dir);
      return syncfs(dir);
    },
  });
  beforeEach(() => void (synced.length = 0));

  it('is made durable by a syncfs of the spool instead, and answered ok', async () => {
    const s = await tempSpool('test', { fs: journalRefused(async () => undefined) });
    try {
      const msg = await s.spool.create({ dest: 'test', param1: 'kept' }, { commit: true });
      expect(synced).toContain(s.spool.paths.state.que);
      expect(await s.spool.readMessage('que', msg.msg_id)).toMatchObject({ param1: 'kept' });
    } finally {
      await s.cleanup();
    }
  });

  it('is refused with RQ_ERR_DISK, its message removed, when the syncfs fails too', async () => {
    const s = await tempSpool('test', { fs: journalRefused(() => eio('syncfs')) });
    try {
      const err = await caught(s.spool.create({ dest: 'test' }, { commit: true }));
      expect(err.code).toBe('RQ_ERR_DISK');
      expect(err.message).toMatch(/ENOSPC/);
      expect(synced).toContain(s.spool.paths.state.que);
      expect(await ls(s.spool.paths.state.que)).toEqual([]);
    } finally {
      await s.cleanup();
    }
  });
});
