// Concurrency limits shared across queues: slots acquired and released, FIFO by since across queues, template keys per tenant (rq-beyond §B12, §B17) (real rq-mgr, queues and scripts; "never more than N" is sampled from /proc for RQ_LIMIT).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idTime } from '../../src/message/message-id.js';
import { LimitSampler } from '../helpers/limit-sampler.js';
import { alive, killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot, waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { Limits, expectNoOverlap, killGroup, START_SHARED_MS, startShared, stdioOf } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('one rq-mgr, several queues sharing keys', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    ({ t, L } = await startShared(['r1', 'r2', 'r3', 'f1', 'f2', 'f3', 't1', 't2'], groups));
  }, START_SHARED_MS);
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('3 queues × 3 workers share "reports" (concurrency 2): never more than 2 scripts hold it, 2 do at times; all done, no slot left', async () => {
    const rnd = seededRandom();
    const sampler = new LimitSampler(t.root, 'reports', 2).start();
    const sent: [string, string][] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const q = ['r1', 'r2', 'r3'][i % 3];
        sent.push([q, await L.send(q, { param1: 'slow', param2: (0.2 + rnd.int(11) / 100).toFixed(2), limit: 'reports' })]);
      }
      // Both slots in use while the others wait (rq-mgr's table; a scan of /proc on a loaded machine
      // may fall between two short runs, so the sampler is only asked for "never more than 2").
      await L.statusWhen('reports', (st) => st?.holders.length === 2 && st.waiting.length > 0, 'both slots of reports to be held', 10_000);
      for (const [q, id] of sent) expect(await L.finish(q, id), rnd.replay).toMatchObject({ state: 'done' });
    } finally {
      await sampler.stop();
    }
    const report = sampler.soFar;
    expectNoOverlap(report, 2, rnd.replay);
    // Every script the sampler saw was one of these messages (a scan of /proc on a loaded machine can
    // miss a 0.2 s run: that every run took its slot is what the limit_grant lines below show).
    for (const s of report.scripts)
      expect(
        sent.map(([, id]) => id),
        rnd.replay,
      ).toContain(s.msgId);
    for (const [q, id] of sent) {
      const h = await L.history(q, id);
      expect(h.filter((e) => e.event === 'limit_grant')).toEqual([expect.objectContaining({ key: 'reports' })]);
    }
    await L.statusWhen('reports', (s) => s === undefined, 'every slot of reports to be given back', 5000);
  });

  it('FIFO across queues: waiters created one by one in three queues start in creation order once the holder is gone', async () => {
    const holder = await L.send('f1', { param1: 'forever', param2: L.pidFile('fifo-holder'), limit: 'fifo' });
    const holderPid = await L.scriptPid('fifo-holder');
    const waiters: [string, string][] = [];
    for (let i = 0; i < 6; i++) {
      const q = ['f2', 'f3', 'f1'][i % 3];
      waiters.push([q, await L.send(q, { param1: 'done', limit: 'fifo' })]);
      // Each one is in line before the next is made: creation order is unambiguous.
      await L.statusWhen('fifo', (s) => s?.waiting.length === i + 1, `waiter ${i + 1} in line`);
    }
    const refs = waiters.map(([q, id]) => `${q}/${id}`);
    const st = await L.status('fifo');
    expect(st).toMatchObject({ concurrency: 1, source: 'config', holders: [{ ref: `f1/${holder}`, queue: 'f1' }] });
    expect(st!.waiting.map((w) => [w.ref, w.position])).toEqual(refs.map((r, i) => [r, i + 1]));
    // since = the creation time from the id (due is now, floored to the second).
    expect(st!.waiting.map((w) => w.since)).toEqual(waiters.map(([, id]) => idTime(id)));
    // Each queue's own view of its waiters.
    for (const [i, [q, id]] of waiters.entries()) {
      expect((await L.getMessage(q, id)).waiting).toEqual({ reason: 'limit', key: 'fifo', position: i + 1 });
      expect(await L.mgr.q(q, 'get_message_state', { msg_id: id })).toEqual(['ok', 'que']);
    }
    expect((await L.mgr.q('f2', 'waiting', { reason: 'limit' }))[1]).toEqual(
      waiters.flatMap(([q, id], i) => (q === 'f2' ? [{ msg_id: id, reason: 'limit', key: 'fifo', position: i + 1 }] : [])),
    );
    expect((await L.history('f2', waiters[0][1])).filter((e) => e.event)).toEqual([expect.objectContaining({ event: 'limit_wait', key: 'fifo', position: 1 })]);

    killGroup(holderPid);
    expect(await L.finish('f1', holder)).toMatchObject({ state: 'err' });
    const starts: number[] = [];
    for (const [q, id] of waiters) {
      expect(await L.finish(q, id)).toMatchObject({ state: 'done' });
      starts.push(...(await L.starts(q, id)));
    }
    expect(starts).toHaveLength(waiters.length);
    // Concurrency 1: each starts after the one before it ended, so the times are strictly in creation order.
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(new Set(starts).size).toBe(starts.length);
    await L.statusWhen('fifo', (s) => s === undefined, 'fifo to be free');
  });

  it('the line is ordered by since, not arrival: a message made earlier in a paused queue goes ahead of a later one already waiting', async () => {
    const holder = await L.send('f1', { param1: 'forever', param2: L.pidFile('fifo-holder-2'), limit: 'fifo' });
    const holderPid = await L.scriptPid('fifo-holder-2');
    expect(await L.mgr.cmd('pause_queue', 'f2')).toEqual(['ok', 'f2']);
    await waitFor(async () => (await L.mgr.q('f2', 'status'))[0] === 'PAUSE', 'f2 paused');
    const early = await L.send('f2', { param1: 'done', limit: 'fifo' });
    // A later creation time (ids have millisecond resolution).
    await waitFor(() => Date.now() > idTime(early)! + 1, 'the clock to move on');
    const late = await L.send('f1', { param1: 'done', limit: 'fifo' });
    expect(idTime(late)!).toBeGreaterThan(idTime(early)!);
    // Only the later one asked: the paused queue holds the earlier one in its que.
    await L.line('fifo', [`f1/${late}`]);
    expect(await L.mgr.cmd('resume_queue', 'f2')).toEqual(['ok', 'f2']);
    await L.line('fifo', [`f2/${early}`, `f1/${late}`]);

    killGroup(holderPid);
    expect(await L.finish('f1', holder)).toMatchObject({ state: 'err' });
    expect(await L.finish('f2', early)).toMatchObject({ state: 'done' });
    expect(await L.finish('f1', late)).toMatchObject({ state: 'done' });
    const [e] = await L.starts('f2', early);
    const [l] = await L.starts('f1', late);
    expect(e).toBeLessThan(l);
  });

  it('a template key gives each tenant its own slots: api:{param3} with "api:*": 1 runs two tenants at once and serialises one; RQ_LIMIT is the expanded key', async () => {
    const sampler = new LimitSampler(t.root, 'api:acme', 1).start();
    const tpl = { param1: 'forever', limit: 'api:{param3}' };
    const a1 = await L.send('t1', { ...tpl, param2: L.pidFile('acme-1'), param3: 'acme' });
    const a1Pid = await L.scriptPid('acme-1');
    const a2 = await L.send('t1', { ...tpl, param2: L.pidFile('acme-2'), param3: 'acme' });
    const g1 = await L.send('t1', { ...tpl, param2: L.pidFile('globex-1'), param3: 'globex' });
    // globex runs beside acme's holder while acme's second message waits.
    const g1Pid = await L.scriptPid('globex-1');
    expect(alive(a1Pid)).toBe(true);
    await waitFor(async () => ((await L.getMessage('t1', a2)).waiting as { position?: number })?.position === 1, 'acme-2 to wait');
    expect((await L.getMessage('t1', a2)).waiting).toEqual({ reason: 'limit', key: 'api:acme', position: 1 });
    expect(await L.status('api:acme')).toMatchObject({
      concurrency: 1,
      source: 'config',
      holders: [{ ref: `t1/${a1}` }],
      waiting: [{ ref: `t1/${a2}`, position: 1 }],
    });
    expect(await L.status('api:globex')).toMatchObject({ concurrency: 1, source: 'config', holders: [{ ref: `t1/${g1}` }], waiting: [] });

    // The script sees the expanded key; {queue} and {param1} expand too, from the queue's default `limit`.
    const env1 = await L.send('t1', { param1: 'env', param3: 'initech', limit: 'api:{param3}' });
    const env2 = await L.send('t2', { param1: 'env' });
    expect(await L.finish('t1', env1)).toMatchObject({ state: 'done' });
    expect(await L.finish('t2', env2)).toMatchObject({ state: 'done' });
    expect((await stdioOf(t.root, 't1', env1)).split('\n')).toContain('RQ_LIMIT=api:initech');
    expect((await stdioOf(t.root, 't2', env2)).split('\n')).toContain('RQ_LIMIT=api:t2-env');

    killGroup(a1Pid);
    const a2Pid = await L.scriptPid('acme-2');
    await waitFor(() => [...sampler.current.values()].includes(a2), 'the sampler to see acme-2 run');
    expect(alive(g1Pid)).toBe(true);
    killGroup(a2Pid);
    killGroup(g1Pid);
    for (const id of [a1, a2, g1]) expect(await L.finish('t1', id)).toMatchObject({ state: 'err' });
    const report = await sampler.stop();
    expectNoOverlap(report, 1);
    // Only acme's messages held its key (a scan may miss a run; the holders above name a1).
    for (const seen of report.scripts) expect([a1, a2]).toContain(seen.msgId);
    for (const key of ['api:acme', 'api:globex', 'api:initech', 'api:t2-env']) await L.statusWhen(key, (s) => s === undefined, `${key} to be free`);
  });
});
