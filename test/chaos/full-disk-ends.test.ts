// A run that ends on a full disk (writes refused with ENOSPC, injected): its final status is written before its message leaves run/, and DISK FULL lasts until a probe finds room, however its waiting writes fare.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { isProbe, noSpaceFs } from '../helpers/no-space-fs.js';
import type { SpoolFs } from '../../src/spool/spool-fs.js';
import { type InProcess, inProcessQueue } from '../queue/in-process.js';
import { capturedLog } from '../helpers/captured-log.js';

/** A queue of one worker on a disk whose writes `disk.refused` refuses, with message A running. */
async function aRunning(disk: { refused: (file: string) => boolean }) {
  const q = await inProcessQueue({ num_workers: 1 }, { fs: () => noSpaceFs((f) => disk.refused(f)) });
  const a = await q.send({ param1: 'a' });
  const script = await q.launcher.nth(0);
  return { q, a, script, statusFile: path.join(q.queue.spool.msgDir('run', a.msg_id), 'status') };
}

/** The status text a client reads for message `id`. */
async function statusOf(q: InProcess, id: string): Promise<string> {
  const [, view] = await q.cmd('get_message_status', { msg_id: id });
  return view.status;
}

const reason = (q: InProcess) => q.queue.admin.reason ?? '';

/** The queue answers and holds DISK FULL with A's script the only one started; once the disk takes writes again, B starts and it is UP. */
async function heldThenResumed(q: InProcess, disk: { refused: (file: string) => boolean }, b: string): Promise<void> {
  expect(await q.cmd('ping')).toEqual(['pong']);
  expect(q.queue.status()).toBe('DISK FULL');
  expect(q.launcher.started.length).toBe(1);
  disk.refused = () => false;
  await q.launcher.nth(1);
  expect(await q.state(b)).toBe('run');
  expect(q.queue.status()).toBe('UP');
}

describe('a run that ends while the disk is full', () => {
  it('keeps the completion text its script said: the end waits (DISK FULL) until that status is written', async () => {
    const disk = { refused: (_f: string) => false };
    const { q, a, script, statusFile } = await aRunning(disk);
    try {
      const b = await q.send({ param1: 'b' });
      const finished = q.next('finished', (e) => e.msg.msg_id === a.msg_id);
      let over = false;
      void finished.then(() => (over = true));
      // The disk fills; a create finds it so first, then the status write of the script's last line.
      disk.refused = () => true;
      expect((await q.cmd('create_message', { dest: 'q', param1: 'c' }))[0]).toBe('fail');
      expect(q.queue.status()).toBe('DISK FULL');
      script.say('done wrote');
      script.exit(0);
      await waitFor(() => reason(q).startsWith('status of') || over, 'the status of A to wait for space, or A to end');
      expect(over).toBe(false);
      expect(await q.state(a.msg_id)).toBe('run');
      // Room for the status (a page given back) but not yet for the probe.
      disk.refused = (f) => isProbe(f) || f !== statusFile;
      await finished;
      expect(await q.state(a.msg_id)).toBe('done');
      expect(await statusOf(q, a.msg_id)).toBe('done - wrote');
      await heldThenResumed(q, disk, b.msg_id);
    } finally {
      await q.close();
    }
  });

  /** What the disk answers the end's writes: want of space (DISK FULL), or of file descriptors (no state, only tried again). */
  const SHORTAGES = [
    ['room', 'ENOSPC: no space left on device, write'],
    ['file descriptors', 'EMFILE: too many open files, open'],
  ] as const;

  it.each(SHORTAGES)('a stop while its end waits for %s leaves the message in run/ for the next start, not in err as a failure of rq', async (_what, text) => {
    const disk = { refused: (_f: string) => false };
    let refusals = 0;
    const fault = () => (refusals++, Object.assign(new Error(text), { code: text.split(':')[0] }));
    const { log, lines } = capturedLog();
    const q = await inProcessQueue({ num_workers: 1, max_interrupts: 3 }, { fs: () => noSpaceFs((f) => disk.refused(f), fault), log });
    try {
      const a = await q.send({ param1: 'a' });
      const script = await q.launcher.nth(0);
      const interrupted = q.next('interrupted', (e) => e.id === a.msg_id);
      disk.refused = (f) => !f.endsWith('history');
      script.say('done wrote');
      script.exit(0);
      // Refused, and tried again: the end waits.
      await waitFor(() => refusals >= 2, 'the end of A to be refused twice');
      await q.stop();
      expect(await fs.readdir(q.queue.spool.paths.state.err)).not.toContain(a.msg_id);
      expect(await fs.readdir(q.queue.spool.paths.state.run)).toContain(a.msg_id);
      await interrupted;
      // A stop, not a crash, to the next start's count of interrupts.
      await fs.access(path.join(q.queue.spool.msgDir('run', a.msg_id), 'shutdown'));
      // Said as what it is, and not as a failure of rq's own.
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.msg.startsWith('stopping')).map((l) => [l.level, l.msg])).toEqual([
        [40, expect.stringMatching(/: message stays in run\/$/)],
      ]);
    } finally {
      await q.close();
    }
  });

  it('a stop while only the sync after its move waits for a descriptor leaves the message where its end put it, not reported interrupted', async () => {
    let runDir = '';
    let refusals = 0;
    const emfile = () => Object.assign(new Error('EMFILE: too many open files, open'), { code: 'EMFILE' });
    const base = noSpaceFs(() => false);
    const open: SpoolFs['open'] = (p, f, m) => (runDir && p === runDir ? (refusals++, Promise.reject(emfile())) : base.open(p, f, m));
    const { log, lines } = capturedLog();
    const q = await inProcessQueue({ num_workers: 1 }, { fs: () => ({ ...base, open }), log });
    try {
      const a = await q.send({ param1: 'a' });
      const script = await q.launcher.nth(0);
      const interrupted: string[] = [];
      q.queue.events.on('interrupted', (e) => interrupted.push(e.id));
      // The fsync of run/ after the rename out of it finds no descriptor.
      runDir = q.queue.spool.paths.state.run;
      script.say('done wrote');
      script.exit(0);
      await waitFor(() => refusals >= 2, 'the sync of run/ to be refused twice');
      await q.stop();
      expect(await q.state(a.msg_id)).toBe('done');
      expect(interrupted).toEqual([]);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.msg.startsWith('stopping'))).toEqual([
        expect.objectContaining({ level: 40, state: 'done', msg: expect.stringContaining('the directory sync after that move not done') }),
      ]);
    } finally {
      await q.close();
    }
  });

  it('stays DISK FULL once its waiting end writes went through, until a probe finds room; no script starts meanwhile', async () => {
    const disk = { refused: (_f: string) => false };
    const { q, a, script, statusFile } = await aRunning(disk);
    try {
      const finished = q.next('finished', (e) => e.msg.msg_id === a.msg_id);
      disk.refused = () => true;
      // Done, but exit 1: the end writes a status of its own (spec §3.3), which waits for space.
      script.say('done wrote');
      script.exit(1);
      await waitFor(() => reason(q).startsWith('status of'), 'the status of A to wait for space');
      // A create refused while the queue is DISK FULL already.
      expect((await q.cmd('create_message', { dest: 'q', param1: 'c' }))[0]).toBe('fail');
      // A few pages come free: B is taken (and waits in the que), A's status still finds none.
      disk.refused = (f) => isProbe(f) || f === statusFile;
      const b = await q.send({ param1: 'b' });
      // Then A's status goes through, into blocks its file had, say: the disk is no emptier.
      disk.refused = isProbe;
      expect((await finished).outcome.state).toBe('err');
      expect(await statusOf(q, a.msg_id)).toMatch(/^err - PROCESS EXITED IMPROPERLY/);
      expect(await statusOf(q, b.msg_id)).toMatch(/^que - waiting: queue disk full: .*ENOSPC/);
      await heldThenResumed(q, disk, b.msg_id);
    } finally {
      await q.close();
    }
  });

  it('a status line the disk refuses while its script runs holds the queue DISK FULL: a slot freed meanwhile starts nothing', async () => {
    const disk = { refused: (_f: string) => false };
    const q = await inProcessQueue({ num_workers: 2 }, { fs: () => noSpaceFs((f) => disk.refused(f)) });
    try {
      const a = await q.send({ param1: 'a' });
      const sa = await q.launcher.nth(0);
      const b = await q.send({ param1: 'b' });
      const sb = await q.launcher.nth(1);
      const c = await q.send({ param1: 'c' });
      const aStatus = path.join(q.queue.spool.msgDir('run', a.msg_id), 'status');
      // Room for everything but A's status line and the probe.
      disk.refused = (f) => isProbe(f) || f === aStatus;
      sa.say('run half way');
      await waitFor(() => q.queue.status() === 'DISK FULL', 'DISK FULL');
      expect(reason(q)).toBe(`status of ${a.msg_id}: ENOSPC: no space left on device, write`);
      const bDone = q.next('finished', (e) => e.msg.msg_id === b.msg_id);
      sb.say('done b');
      sb.exit(0);
      await bDone;
      expect(await q.cmd('ping')).toEqual(['pong']);
      expect(q.launcher.started.length).toBe(2);
      expect(await q.state(c.msg_id)).toBe('que');
      disk.refused = () => false;
      await q.launcher.nth(2);
      expect(await q.state(c.msg_id)).toBe('run');
      const aDone = q.next('finished', (e) => e.msg.msg_id === a.msg_id);
      sa.say('done a');
      sa.exit(0);
      await aDone;
      expect(await statusOf(q, a.msg_id)).toBe('done - a');
    } finally {
      await q.close();
    }
  });

  it("a run that folded a duplicate ends done, however long the duplicate's writes wait for room", async () => {
    const disk = { refused: (_f: string) => false };
    const q = await inProcessQueue({ num_workers: 1, coalesce_params: [1] }, { fs: () => noSpaceFs((f) => disk.refused(f)) });
    try {
      await q.send({ param1: 'z' });
      const sz = await q.launcher.nth(0);
      const a = await q.send({ param1: 'x' });
      const b = await q.send({ param1: 'x' });
      sz.say('done z');
      sz.exit(0);
      // A starts with B folded into it (spec §3.5).
      const sa = await q.launcher.nth(1);
      const finished = q.next('finished', (e) => e.msg.msg_id === a.msg_id);
      let over = false;
      void finished.then(() => (over = true));
      disk.refused = (f) => isProbe(f) || f.includes(b.msg_id);
      sa.say('done a');
      sa.exit(0);
      await waitFor(() => reason(q).includes(b.msg_id) || over, "B's writes to wait for space, or A to end");
      expect(over).toBe(false);
      expect(await q.state(a.msg_id)).toBe('run');
      disk.refused = isProbe;
      expect((await finished).outcome.state).toBe('done');
      expect([await q.state(a.msg_id), await q.state(b.msg_id)]).toEqual(['done', 'done']);
      expect(await statusOf(q, b.msg_id)).toMatch(/^done - duplicate .*\/q\/q\//);
      expect(q.queue.counts().err).toBe(0);
      disk.refused = () => false;
      await waitFor(() => q.queue.status() === 'UP', 'the queue UP');
    } finally {
      await q.close();
    }
  });
});
