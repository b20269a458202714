// QueueSpool message files on real directories: msg and status files, clone with attachments and its failures (creates: queue-spool-create; moves, listings: queue-spool-moves, queue-spool-listing).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATES } from '../../src/message/states.js';
import { pickFields } from '../../src/message/message.js';
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { createCopy } from '../../src/spool/message-copy.js';
import { nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { recordingFs } from '../helpers/recording-fs.js';
import { HOST, type TempSpool, caught, ls, tempSpool } from '../helpers/temp-spool.js';

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
    // Durable: the same inode, overwritten (a longer text: past the old end first, then over it) and fsynced.
    expect(rec.only('truncate', 'write', 'fsync', 'fsynced')).toEqual([`write ${status}`, `write ${status}`, `fsync ${status}`, `fsynced ${status}`]);
    await spool.writeStatus(dir, null);
    expect(await spool.readStatus('que', id)).toEqual({ job_status: null });
    await fs.writeFile(path.join(dir, 'status'), '{"job_status": 42}');
    expect(await spool.readStatus('que', id)).toEqual({ job_status: null });
    await fs.writeFile(path.join(dir, 'status'), '{broken');
    expect(await spool.readStatus('que', id)).toBeNull();
    expect((await ls(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('clone (createCopy)', () => {
  it('hard-links the attachments and copies the fields into a committed message', async () => {
    const src = path.join(t.root, 'payload.bin');
    await fs.writeFile(src, 'attachment bytes');
    const orig = await spool.create({ dest: 'test', src: 'me', param1: 'a', param2: 'b', max_count: 7, count: 3, due: 1000 }, { commit: false });
    await spool.attach(orig.msg_id, src, 'one.bin');
    await spool.attach(orig.msg_id, src, 'two.bin');
    await spool.commit(orig.msg_id);
    const fromDir = await spool.move(orig.msg_id, 'que', 'done', { actor: 'test' });

    clock += 60_000;
    const fields = {
      ...pickFields(orig, ['orig_msg_id', 'max_count', 'src', 'param1', 'param2', 'param3', 'param4', 'post_run_webhook', 'due', 'force_remote']),
      count: 0,
    };
    const clone = await createCopy(spool, fields, fromDir, { cloned_from: orig.msg_id });
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
    const clone = await createCopy(spool, { dest: 'test' }, null);
    expect(await spool.locate(clone.msg_id)).toBe('que');
  });

  it('a failed link leaves nothing behind and throws RQ_ERR_DISK', async () => {
    const fromDir = path.join(t.root, 'fake-source');
    await fs.mkdir(path.join(fromDir, 'attach'), { recursive: true });
    await fs.writeFile(path.join(fromDir, 'attach', 'a.txt'), 'bytes');
    const failing = { ...nodeSpoolFs, link: async () => Promise.reject(Object.assign(new Error('EMLINK: too many links'), { code: 'EMLINK' })) };
    const s = new QueueSpool(t.root, 'test', { host: HOST, now: () => clock, fs: failing });
    const err = await caught(createCopy(s, { dest: 'test' }, fromDir));
    expect(err.code).toBe('RQ_ERR_DISK');
    expect(err.message.startsWith('link attachments failed: ')).toBe(true);
    for (const st of STATES) expect(await ls(spool.paths.state[st]), st).toEqual([]);
  });

  it('carries only the regular files a script left in attach/, never its links, FIFOs or directories', async () => {
    const fromDir = path.join(t.root, 'script-made');
    const attach = path.join(fromDir, 'attach');
    await fs.mkdir(path.join(attach, 'a-directory'), { recursive: true });
    await fs.writeFile(path.join(attach, 'plain.txt'), 'bytes');
    await fs.symlink('/etc/passwd', path.join(attach, 'passwd'));
    const clone = await createCopy(spool, { dest: 'test' }, fromDir);
    expect(Object.keys(await spool.attachments('que', clone.msg_id))).toEqual(['plain.txt']);
  });
});
