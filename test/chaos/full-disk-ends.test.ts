// A run that ends on a full disk (writes refused with ENOSPC, injected): its final status is written before its message leaves run/, and DISK FULL lasts until a probe finds room, however its waiting writes fare.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { isProbe, noSpaceFs } from '../helpers/no-space-fs.js';
import { type InProcess, inProcessQueue } from '../queue/in-process.js';

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

describe('a run that ends while the disk is full', () => {
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
      expect(await q.cmd('ping')).toEqual(['pong']);
      expect(q.queue.status()).toBe('DISK FULL');
      expect(q.launcher.started.length).toBe(1);
      expect(await statusOf(q, b.msg_id)).toMatch(/^que - waiting: queue disk full: .*ENOSPC/);
      disk.refused = () => false;
      await q.launcher.nth(1);
      expect(await q.state(b.msg_id)).toBe('run');
      expect(q.queue.status()).toBe('UP');
    } finally {
      await q.close();
    }
  });
});
