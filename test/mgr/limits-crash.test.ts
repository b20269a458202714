// Concurrency limits through crashes: kill -9 of a queue or of rq-mgr, and a script outliving its stop grace, never hand out a slot a live script holds (rq-beyond §B12.5, §B18.9) (real rq-mgr, queues and scripts; "never more than N" is sampled from /proc for RQ_LIMIT).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { mgrCommand } from '../../src/ipc/rq1.js';
import { idTime } from '../../src/message/message-id.js';
import { LimitSampler } from '../helpers/limit-sampler.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { alive, killLeftoverGroups, newPidInFile } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { Limits, expectNoOverlap, killGroup, writeLimits } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('crashes', () => {
  let t: TestRoot | undefined;
  let L: Limits | undefined;

  async function setUp(limits: Record<string, number>, queues: [string, number, Record<string, unknown>?][]): Promise<Limits> {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await writeLimits(t.root, limits);
    for (const [q, n, extra] of queues) await addQueue(t.root, q, { num_workers: n, extra });
    const mgr = await MgrProc.start(t.root);
    L = new Limits(t.root, mgr, groups);
    for (const [q] of queues) await mgr.waitQueueUp(q);
    await L.settled();
    return L;
  }
  afterEach(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
    L = undefined;
    t = undefined;
  });

  it('kill -9 of a queue holding both slots: they stay counted (orphaned) until its recovery killed the scripts and sent limit_reset; then FIFO; its messages run again', async () => {
    const L = await setUp({ crash: 2 }, [
      ['ca', 2],
      ['cb', 3],
    ]);
    const sampler = new LimitSampler(L.root, 'crash', 2).start();
    try {
      const a = [await L.send('ca', { param1: 'forever', param2: L.pidFile('ca-1'), limit: 'crash' })];
      const old1 = await L.scriptPid('ca-1');
      a.push(await L.send('ca', { param1: 'forever', param2: L.pidFile('ca-2'), limit: 'crash' }));
      const old2 = await L.scriptPid('ca-2');
      const b: string[] = [];
      for (let i = 0; i < 3; i++) {
        b.push(await L.send('cb', { param1: 'slow', param2: '0.3', limit: 'crash' }));
        await L.line(
          'crash',
          b.map((id) => `cb/${id}`),
        );
      }

      const caPid = await L.mgr.waitQueueUp('ca');
      process.kill(caPid, 'SIGKILL');
      // rq-mgr saw the death: ca's slots are orphans, still counted; cb's waiters still wait.
      const orphaned = await L.statusWhen('crash', (s) => s?.holders.length === 2 && s.holders.every((h) => h.orphaned), 'the holders to be orphaned', 5000, 5);
      expect(orphaned!.holders.map((h) => h.ref).sort()).toEqual(a.map((id) => `ca/${id}`).sort());
      expect(orphaned!.waiting.map((w) => w.ref)).toEqual(b.map((id) => `cb/${id}`));

      // The next incarnation kills the leftovers, then its reset frees the slots and enters its own
      // two messages (older since) in one step: they keep their place, ahead of cb's (§B12.5).
      const caPid2 = await waitFor(async () => {
        const p = await L.mgr.waitQueueUp('ca').catch(() => 0);
        return p && p !== caPid ? p : false;
      }, 'ca to be restarted');
      expect(caPid2).not.toBe(caPid);
      const new1 = await newPidInFile(L.pidFile('ca-1'), old1, 'ca-1 to run again');
      const new2 = await newPidInFile(L.pidFile('ca-2'), old2, 'ca-2 to run again');
      groups.push(new1, new2);
      expect([old1, old2].map(alive)).toEqual([false, false]);
      const st = await L.status('crash');
      expect(st!.holders.map((h) => h.ref).sort()).toEqual(a.map((id) => `ca/${id}`).sort());
      expect(st!.holders.some((h) => h.orphaned)).toBe(false);
      expect(st!.waiting.map((w) => w.ref)).toEqual(b.map((id) => `cb/${id}`));
      killGroup(new1);
      killGroup(new2);
      for (const id of b) expect(await L.finish('cb', id)).toMatchObject({ state: 'done' });
      for (const id of a) expect(await L.finish('ca', id)).toMatchObject({ state: 'err' });

      const report = await sampler.stop();
      expectNoOverlap(report, 2);
      // No cb script started before both orphans were seen dead.
      const orphanLast = Math.max(...report.scripts.filter((s) => s.pgid === old1 || s.pgid === old2).map((s) => s.last));
      const bFirst = Math.min(...report.scripts.filter((s) => b.includes(s.msgId)).map((s) => s.first));
      expect(bFirst).toBeGreaterThanOrEqual(orphanLast);
      // Order of the starts: ca's two again, then cb's three.
      const aStarts = await Promise.all(a.map((id) => L.starts('ca', id)));
      const bStarts = await Promise.all(b.map(async (id) => (await L.starts('cb', id))[0]));
      for (const s of aStarts) expect(s).toHaveLength(2);
      expect(Math.max(...aStarts.map((s) => s[1]))).toBeLessThan(Math.min(...bStarts));
      await L.statusWhen('crash', (s) => s === undefined, 'crash to be free');
    } finally {
      await sampler.stop();
    }
  });

  it('kill -9 of rq-mgr mid-run: every queue stops its scripts and exits; a fresh rq-mgr settles, every message completes, never more than 2 at once', async () => {
    const L = await setUp({ mk: 2 }, [
      ['ma', 3],
      ['mb', 3],
    ]);
    const rnd = seededRandom();
    const sampler = new LimitSampler(L.root, 'mk', 2).start();
    try {
      const sent: [string, string][] = [];
      for (let i = 0; i < 10; i++) {
        const q = i % 2 ? 'mb' : 'ma';
        sent.push([q, await L.send(q, { param1: 'slow', param2: (0.3 + rnd.int(21) / 100).toFixed(2), limit: 'mk' })]);
      }
      await waitFor(() => sampler.current.size === 2, 'two scripts running');
      const queuePids = [await L.mgr.waitQueueUp('ma'), await L.mgr.waitQueueUp('mb')];
      const gone = new Promise((r) => L.mgr.child.once('exit', r));
      L.mgr.child.kill('SIGKILL');
      await gone;
      await waitFor(() => queuePids.every((p) => !alive(p)), 'the queue processes to exit', 15_000);
      // They stopped their scripts before exiting.
      await sampler.next();
      await sampler.next();
      expect(sampler.current.size).toBe(0);
      const interrupted = [
        ...(await fs.readdir(queuePaths(L.root, 'ma').state.run)).map((id) => ['ma', id]),
        ...(await fs.readdir(queuePaths(L.root, 'mb').state.run)).map((id) => ['mb', id]),
      ];
      expect(interrupted.length).toBeGreaterThan(0);

      const t0 = Date.now();
      L.mgr = await MgrProc.start(L.root);
      for (const [q, id] of sent) expect(await L.finish(q, id, 30_000), rnd.replay).toMatchObject({ state: 'done' });
      const report = await sampler.stop();
      expectNoOverlap(report, 2, rnd.replay);
      expect(report.max).toBe(2);

      // Settling: nothing was granted in the fresh rq-mgr's first 2 s; then the line followed since.
      const after: { since: number; start: number; id: string }[] = [];
      for (const [q, id] of sent) {
        const starts = await L.starts(q, id);
        if (interrupted.some(([iq, iid]) => iq === q && iid === id)) expect(starts.length, `${q}/${id} interrupted`).toBe(2);
        for (const s of starts.filter((s) => s >= t0)) after.push({ since: idTime(id)!, start: s, id });
      }
      expect(after.length).toBeGreaterThan(0);
      expect(Math.min(...after.map((a) => a.start)) - t0, rnd.replay).toBeGreaterThanOrEqual(2000);
      // Grants go by since; two granted at one moment may start in either order, nothing more.
      after.sort((x, y) => x.start - y.start);
      const bySince = [...after].sort((x, y) => x.since - y.since).map((a) => a.id);
      for (const [i, a] of after.entries())
        expect(Math.abs(bySince.indexOf(a.id) - i), `${rnd.replay}: start order ${after.map((a) => a.id)}`).toBeLessThanOrEqual(1);
      await L.statusWhen('mk', (s) => s === undefined, 'mk to be free');
    } finally {
      await sampler.stop();
    }
  });

  it('restart_queue of a queue whose script outlives the 20 s stop grace (kill_grace 30, TERM ignored): its slot is not freed while that script still runs', async () => {
    const L = await setUp({ stuck: 1 }, [
      ['sa', 1, { kill_grace: 30 }],
      ['sb', 1],
    ]);
    expect((await L.mgr.q('sa', 'config'))[1]).toMatchObject({ kill_grace: 30 });
    const sampler = new LimitSampler(L.root, 'stuck', 1).start();
    try {
      const s = await L.send('sa', { param1: 'stubborn', param2: L.pidFile('stubborn'), limit: 'stuck' });
      const stubborn = await L.scriptPid('stubborn');
      const w = await L.send('sb', { param1: 'slow', param2: '0.3', limit: 'stuck' });
      await L.line('stuck', [`sb/${w}`]);
      // rq-mgr stops sa (TERM), waits 20 s, then SIGKILLs it: the stubborn script is still in its grace.
      const restarted = await mgrCommand(rootPaths(L.root).mgrSock, 'restart_queue', 'sa', { timeoutMs: 40_000 });
      expect(restarted).toEqual(['ok', 'sa']);
      // s runs again in the new sa once its recovery killed the old script; it is older than w, so
      // its reset puts it first in line (§B12.5); w runs when it ends.
      const again = await newPidInFile(L.pidFile('stubborn'), stubborn, 's to run again', 30_000);
      groups.push(again);
      killGroup(again);
      expect(await L.finish('sa', s)).toMatchObject({ state: 'err' });
      expect(await L.finish('sb', w)).toMatchObject({ state: 'done' });
      const report = await sampler.stop();
      const old = report.scripts.find((x) => x.pgid === stubborn)!;
      // w's start from its history: a 0.3 s run may fall between two scans of /proc on a busy machine.
      const [wStart] = await L.starts('sb', w);
      expect(wStart, `w started while the old script of s was alive (seen until ${old.last})`).toBeGreaterThanOrEqual(old.last);
      expectNoOverlap(report, 1);
    } finally {
      await sampler.stop();
    }
  }, 60_000);
});
