// A disk that fills while a queue takes and drains messages: creates are acknowledged or refused, the queue answers and shows DISK FULL, and once space returns every acknowledged message ends done exactly once, with no daemon restarted.
import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { MgrProc, install } from '../helpers/mgr-proc.js';
import { VERBS_SH, freePort, waitFor } from '../helpers/rq-root.js';
import { fillDisk } from '../helpers/disk-fill.js';
import { inProcessQueue } from '../queue/in-process.js';
import { noSpaceFs } from '../helpers/no-space-fs.js';

const run = promisify(execFile);
/** 2,000 messages in CI; RQ_CHAOS_BIG=1 for 20,000. */
const COUNT = process.env.RQ_CHAOS_BIG === '1' ? 20_000 : 2_000;
const BATCH = 100;
/** What the root needs once every message is done (msg, status, history and stdio.log: a tmpfs page each), with room to spare. */
const TMPFS_MIB = 16 + Math.ceil((COUNT * 24) / 1024);
const DISK_REFUSAL = /ENOSPC|no space/i;

type Reply = [string, [string, string][]];

/** The marker (param2) of every message under done/, with how many times each is there. */
async function doneMarkers(doneDir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const entries = await fsp.readdir(doneDir, { recursive: true });
  for (const rel of entries.filter((e) => path.basename(e) === 'msg')) {
    const msg = JSON.parse(await fsp.readFile(path.join(doneDir, rel), 'utf8')) as { param2: string };
    out.set(msg.param2, (out.get(msg.param2) ?? 0) + 1);
  }
  return out;
}

/** The batches' replies: marker → acknowledged; refused ones checked to be refusals for want of space. */
function tally(reply: Reply, markers: string[], acked: Set<string>): number {
  expect(reply[0]).toBe('ok');
  let refused = 0;
  reply[1].forEach(([head, text], i) => {
    if (head === 'ok') acked.add(markers[i]);
    else {
      expect(text).toMatch(DISK_REFUSAL);
      refused += 1;
    }
  });
  return refused;
}

describe('a full disk under a real root (tmpfs)', () => {
  let dir = '';
  let root = '';
  let mounted = false;
  let mountError = '';
  let mgr: MgrProc | undefined;

  beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-chaos-disk-'));
    root = path.join(dir, 'root');
    await fsp.mkdir(root);
    try {
      await run('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MIB}m,mode=0755`, 'rq-chaos-disk', root]);
      mounted = true;
    } catch (err) {
      mountError = (err as Error).message.trim();
      return;
    }
    await install(root, await freePort());
    mgr = await MgrProc.start(root);
  }, 60_000);
  afterAll(async () => {
    await mgr?.stop();
    if (mounted) await run('umount', ['-l', root]);
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it(`takes and drains ${COUNT} messages while the disk fills and empties, loses none, restarts nothing`, async (ctx) => {
    if (!mounted) {
      ctx.skip(`cannot mount a tmpfs here (${mountError}); the injected-ENOSPC test below drives the same paths`);
      return;
    }
    const m = mgr!;
    const cfg = { name: 'dq', script: VERBS_SH, num_workers: 2, exec_prefix: '', coalesce_params: [], blocking_params: [] };
    expect(await m.cmd('create_queue', JSON.stringify(cfg))).toEqual(['success', 'queue created - awesome']);
    await m.waitQueueUp('dq');
    await waitFor(async () => (await m.cmd('status'))[1]['[timers]']?.status === 'RUNNING', 'the timers daemon');
    const before = (await m.cmd('status'))[1] as Record<string, { pid: number; restarts: number }>;

    const acked = new Set<string>();
    let refused = 0;
    const filler = path.join(root, 'filler');
    for (let start = 0; start < COUNT; start += BATCH) {
      // Full once 40 % are in: the que is deep, scripts are running, creates keep coming.
      if (start === Math.floor((COUNT * 0.4) / BATCH) * BATCH) fillDisk(filler);
      const markers = Array.from({ length: Math.min(BATCH, COUNT - start) }, (_, i) => `m${start + i}`);
      const reply = (await m.q('dq', 'create_messages', { messages: markers.map((param2) => ({ dest: 'dq', param1: 'done', param2 })) })) as Reply;
      refused += tally(reply, markers, acked);
    }
    expect(refused).toBeGreaterThan(0);

    // The queue holds its messages, says why, and keeps answering.
    await waitFor(async () => (await m.q('dq', 'status'))[0] === 'DISK FULL', 'the queue to show DISK FULL', 30_000);
    expect(await m.q('dq', 'ping')).toEqual(['pong']);
    const held = await m.q('dq', 'num_messages');
    expect(held.que).toBeGreaterThan(0);

    await fsp.rm(filler);
    await waitFor(
      async () => {
        const n = await m.q('dq', 'num_messages');
        return n.que === 0 && n.run === 0 && n.done === acked.size;
      },
      `the ${acked.size} acknowledged messages to be done`,
      180_000,
    );
    expect((await m.q('dq', 'status'))[0]).toBe('UP');

    const p = queuePaths(root, 'dq');
    const done = await doneMarkers(p.state.done);
    expect([...done.keys()].sort()).toEqual([...acked].sort());
    expect([...done.values()].filter((n) => n !== 1)).toEqual([]);
    expect((await fsp.readdir(p.state.run)).filter((n) => /^\d/.test(n))).toEqual([]);
    expect((await fsp.readdir(p.state.err)).filter((n) => /^\d/.test(n))).toEqual([]);

    // Every daemon is the one that was there before the disk filled.
    const after = (await m.cmd('status'))[1] as typeof before;
    for (const [name, w] of Object.entries(before))
      expect({ name, pid: after[name]?.pid, restarts: after[name]?.restarts }).toEqual({ name, pid: w.pid, restarts: w.restarts });
    expect(m.child.exitCode).toBe(null);
    expect(await m.cmd('ping')).toEqual(['pong']);
  }, 300_000);
});

/** The status view of the newest of `ids` (full ids, as a create answers) still in que. */
async function firstQueued(q: Awaited<ReturnType<typeof inProcessQueue>>, ids: string[]): Promise<{ status: string }> {
  for (const id of [...ids].reverse()) {
    const [, view] = await q.cmd('get_message_status', { msg_id: id.split('/').pop() });
    if (view.state === 'que') return view;
  }
  throw new Error('no message left in que');
}

describe('a full disk, injected (ENOSPC from every write of the spool)', () => {
  it('refuses creates, holds the queue in DISK FULL, answers, and finishes every acknowledged message once writes work again', async () => {
    let full = false;
    const q = await inProcessQueue({ num_workers: 2 }, { fs: () => noSpaceFs(() => full) });
    try {
      // Every script says done and exits, as the bash fixture does, once the first batch is in.
      let drain!: () => void;
      const draining = new Promise<void>((r) => (drain = r));
      let stop = false;
      void (async () => {
        for (let i = 0; !stop; i++) {
          const s = await q.launcher.nth(i);
          await draining;
          s.say('done ok');
          s.exit(0);
        }
      })();
      const acked = new Set<string>();
      const ids: string[] = [];
      let refused = 0;
      for (let start = 0; start < 400; start += 200) {
        const markers = Array.from({ length: 200 }, (_, i) => `m${start + i}`);
        const reply = (await q.cmd('create_messages', { messages: markers.map((param2) => ({ dest: 'q', param1: 'done', param2 })) })) as Reply;
        refused += tally(reply, markers, acked);
        ids.push(...reply[1].filter(([head]) => head === 'ok').map(([, id]) => id));
        // Full with the que deep and two scripts running, which then finish.
        full = true;
        drain();
      }
      expect(acked.size).toBe(200);
      expect(refused).toBe(200);
      await waitFor(() => q.queue.status() === 'DISK FULL', 'DISK FULL');
      const held = q.queue.counts();
      expect(held.que + held.run).toBeGreaterThan(0);
      // Nothing starts while DISK FULL lasts: a create (refused) and a ping later, still the same scripts.
      const started = q.launcher.started.length;
      await q.cmd('create_message', { dest: 'q', param1: 'done', param2: 'marker' });
      expect(await q.cmd('ping')).toEqual(['pong']);
      expect(q.launcher.started.length).toBe(started);
      // It says which write found no room, and a queued message's status says why it waits.
      const [, detail] = await q.cmd('status_detail');
      expect(detail).toEqual({
        status: 'DISK FULL',
        reason: expect.stringMatching(/^(create|move .*|sync of .*|status of .*|msg of .*|pid of .*|removal of .*): ENOSPC: no space left on device, write$/),
      });
      const queued = await firstQueued(q, ids);
      expect(queued.status).toBe(`que - waiting: queue disk full: ${detail.reason}`);

      full = false;
      await waitFor(
        () => {
          const n = q.queue.counts();
          return n.que === 0 && n.run === 0 && n.done === acked.size;
        },
        'every acknowledged message done',
        30_000,
      ).catch((e) => {
        throw new Error(`${e.message}: ${JSON.stringify(q.queue.counts())} ${q.queue.status()} acked ${acked.size} started ${q.launcher.started.length}`);
      });
      stop = true;
      expect(q.queue.status()).toBe('UP');
      const done = await doneMarkers(q.queue.spool.paths.state.done);
      expect([...done.keys()].sort()).toEqual([...acked].sort());
      expect([...done.values()].filter((n) => n !== 1)).toEqual([]);
      expect((await fsp.readdir(q.queue.spool.paths.state.run)).filter((n) => /^\d/.test(n))).toEqual([]);
    } finally {
      await q.close();
    }
  }, 60_000);
});
