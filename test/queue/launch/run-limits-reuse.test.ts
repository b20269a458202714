// Run limits over many runs and changes: cgroups used again hold no trace of the last run, a reload judges new limits, the child_process gate is accounted, IO and a child's OOM are counted. Real queue processes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownV1Homes } from '../../../src/queue/launch/cgroup-v1.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';
import { LIMITS_PY, runEnd as runEndIn } from './limit-queues.js';

const homes = ownV1Homes();
const NO_V1 = (['memory', 'pids', 'cpu', 'cpuacct'] as const).find((c) => !homes[c] || 'why' in homes[c]!);
const T = 30_000;
const MiB = 1024 * 1024;
const SHM = `rq-limits-test-${process.pid}`;

let t: TestRoot;
const q: Record<string, QueueProc> = {};

const runEnd = (m: { path: string }) => runEndIn(t.root, m);
const run = async (name: string, fields: Record<string, unknown>) => q[name].waitState(await q[name].send(fields), ['done', 'err'], T);

describe.skipIf(NO_V1 !== undefined)(`run limits over many runs${NO_V1 ? ` (skipped: no usable cgroup v1 ${NO_V1} hierarchy)` : ''}`, () => {
  beforeAll(async () => {
    t = await makeRoot();
    const extra = { kill_grace: 0 };
    await addQueue(t.root, 'lim', { script: LIMITS_PY, extra: { ...extra, memory_max: '64M', pids_max: 100 } });
    await addQueue(t.root, 'gate', { script: LIMITS_PY, extra: { ...extra, memory_max: '64M' } });
    await addQueue(t.root, 'reload', { script: LIMITS_PY, extra });
    q.lim = await QueueProc.start(t.root, 'lim');
    q.gate = await QueueProc.start(t.root, 'gate', { env: { RQ_SPAWN: 'node' } });
    q.reload = await QueueProc.start(t.root, 'reload');
    await addQueue(t.root, 'off', { script: LIMITS_PY, extra: { ...extra, memory_max: '64M' } });
    q.off = await QueueProc.start(t.root, 'off', { env: { RQ_CGROUP: 'off' } });
  }, T);
  afterAll(async () => {
    await Promise.all(Object.values(q).map((p) => p.stop()));
    await fs.rm(`/dev/shm/${SHM}`, { force: true });
    await t?.cleanup();
  });

  it(
    'a run that left memory charged (a tmpfs file) does not weigh on the next: a lower limit still holds, a new cgroup if need be',
    async () => {
      expect((await run('lim', { param1: 'shm', param2: '24', param3: SHM })).state).toBe('done');
      const next = await run('lim', { param1: 'alloc', param2: '100', memory_max: '16M' });
      expect(next.status).toBe('err - OOM - killed at memory_max 16M (peak 16M)');
    },
    T,
  );

  it(
    "a run's page cache is given back before its cgroup is used again: the next run's peak is its own",
    async () => {
      expect((await run('lim', { param1: 'file', param2: '50' })).state).toBe('done');
      const small = await run('lim', { param1: 'alloc', param2: '1' });
      expect((await runEnd(small)).usage.memory_peak_bytes).toBeLessThan(20 * MiB);
    },
    T,
  );

  it(
    'counts the bytes a run writes, and a child the OOM killer ended while the script finished its work',
    async () => {
      const wrote = await runEnd(await run('lim', { param1: 'file', param2: '8' }));
      expect(wrote.usage.io_write_bytes).toBeGreaterThanOrEqual(8 * MiB);
      const survived = await run('lim', { param1: 'child_oom', param2: '200' });
      expect(survived.status).toBe('done - child ended -9');
      expect((await runEnd(survived)).usage).toMatchObject({ oom_kills: 1, source: 'cgroup' });
    },
    T,
  );

  it.each(['err', 'fatal'])(
    'a child the OOM killer ended, the script going on to report %s: the run ends as the script says, the kill counted in its usage',
    async (said) => {
      // A retry budget: an OOM failure would be retried, a fatal one never is.
      const m = await run('lim', { param1: 'child_oom', param2: '200', param3: said, max_retries: said === 'fatal' ? 1 : 0 });
      expect(m).toMatchObject({ state: 'err', status: 'err - child ended -9' });
      const end = await runEnd(m);
      expect(end.usage).toMatchObject({ oom_kills: 1, source: 'cgroup' });
      // An err without a retry budget fails the classic way, naming no failure kind; fatal is one.
      expect(end.failure).toBe(said === 'err' ? undefined : said);
    },
    T,
  );

  it(
    'a child the OOM killer ended, the script then failing without a completion line (a wrapper exiting 137): the OOM status',
    async () => {
      const m = await run('lim', { param1: 'child_oom', param2: '200', param3: 'exit' });
      expect(m.status).toBe('err - OOM - killed at memory_max 64M (peak 64M)');
      expect(await runEnd(m)).toMatchObject({ failure: 'oom', exit: { code: 137 }, usage: { oom_kills: 1 } });
    },
    T,
  );

  it(
    'through the child_process gate (RQ_SPAWN=node) the limits hold and the run is accounted from its cgroups',
    async () => {
      const m = await run('gate', { param1: 'alloc', param2: '200' });
      expect(m.status).toBe('err - OOM - killed at memory_max 64M (peak 64M)');
      const ok = await runEnd(await run('gate', { param1: 'alloc', param2: '8' }));
      expect(ok.usage).toMatchObject({ source: 'cgroup', cpu_user_ms: expect.any(Number) });
      expect(ok.usage.memory_peak_bytes).toBeGreaterThan(8 * MiB);
    },
    T,
  );

  it('RQ_CGROUP=off: a queue that requires limits says exactly which it cannot enforce, and why', async () => {
    const [, status] = await q.off.cmd('status_detail');
    expect(status).toEqual({
      status: 'SCRIPTERROR',
      reason: 'run limits cannot be enforced here: memory_max: RQ_CGROUP=off (limits_best_effort: true runs scripts anyway)',
    });
  });

  it(
    'a config reload judges its limits again: one the host cannot enforce holds the queue, a fixed one lifts the hold and is enforced',
    async () => {
      const config = path.join(t.root, 'queues', 'reload', 'config.json');
      const base = JSON.parse(await fs.readFile(config, 'utf8'));
      const reload = async (extra: Record<string, unknown>, status: string) => {
        await fs.writeFile(config, JSON.stringify({ ...base, ...extra }));
        q.reload.child.kill('SIGHUP');
        return waitFor(async () => {
          const [, s] = await q.reload.cmd('status_detail');
          return s.status === status && s;
        }, `status ${status}`);
      };
      expect(await reload({ io_weight: 200 }, 'SCRIPTERROR')).toMatchObject({ reason: expect.stringMatching(/io_weight/) });
      await reload({ memory_max: '32M' }, 'UP');
      expect((await run('reload', { param1: 'alloc', param2: '100' })).status).toBe('err - OOM - killed at memory_max 32M (peak 32M)');
    },
    T,
  );
});
