// Run limits and accounting end to end on the host's cgroup v1 hierarchies: real queue processes, a python script that allocates, forks and spins, and the kernel enforcing.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownV1Homes } from '../../../src/queue/launch/cgroup-v1.js';
import { QueueProc, addQueue, makeRoot, pidAlive, waitFor } from '../../helpers/rq-root.js';
import { LIMITS_PY, limitQueues } from './limit-queues.js';

const homes = ownV1Homes();
const NO_V1 = (['memory', 'pids', 'cpu', 'cpuacct'] as const).find((c) => !homes[c] || 'why' in homes[c]!);
const T = 30_000;

const QUEUES: Record<string, Record<string, unknown>> = {
  oom: { memory_max: '64M' },
  bomb: { pids_max: 32 },
  slow: { cpu_max: 0.2 },
  acct: { pids_max: 1000 },
  plain: {},
  weighed: { io_weight: 200 },
  besteffort: { io_weight: 200, memory_max: '256M', limits_best_effort: true },
};

describe.skipIf(NO_V1 !== undefined)(`run limits${NO_V1 ? ` (skipped: no usable cgroup v1 ${NO_V1} hierarchy)` : ''}`, () => {
  const { q, runEnd, stdio } = limitQueues(QUEUES, T);

  it(
    'memory_max 64M: a script writing 1 GiB ends in err with the OOM status from the cgroup counter, within 2 s, while another queue runs',
    async () => {
      const started = Date.now();
      const id = await q.oom.send({ param1: 'alloc', param2: '1024' });
      const beside = await q.plain.send({ param1: 'alloc', param2: '8' });
      const m = await q.oom.waitState(id, ['err', 'done']);
      expect(Date.now() - started).toBeLessThan(2000 + 1000);
      expect(m.status).toBe('err - OOM - killed at memory_max 64M (peak 64M)');
      const end = await runEnd(m);
      expect(end).toMatchObject({ to: 'err', exit: { signal: 'SIGKILL' }, usage: { source: 'cgroup' } });
      expect(end.usage.memory_peak_bytes).toBeGreaterThan(60 * 1024 * 1024);
      expect(end.usage.memory_peak_bytes).toBeLessThanOrEqual(64 * 1024 * 1024);
      expect((await q.plain.waitState(beside, ['done', 'err'])).state).toBe('done');
      // Counted apart from other failures: a kind of its own.
      const stats = await q.oom.cmd('metrics');
      expect(stats[1].totals.failures.oom).toBe(1);
      // Its usage is in the queue's histograms (rq_run_cpu_seconds, rq_run_memory_peak_bytes).
      expect(stats[1].totals.run_memory).toMatchObject({ count: 1, sum: end.usage.memory_peak_bytes });
      expect(stats[1].totals.run_cpu.count).toBe(1);
      // And in the day's statistics: OOM kills counted apart, CPU as a distribution, peak memory summed.
      const [, day] = await q.oom.cmd('stats');
      expect(day).toMatchObject({ ooms: 1, cpu: { count: 1 }, memory: { count: 1, sum: end.usage.memory_peak_bytes, max: end.usage.memory_peak_bytes } });
    },
    T,
  );

  it(
    'memory_max asked by a message below its queue: the lower limit holds; above it: the queue’s',
    async () => {
      const low = await q.oom.waitState(await q.oom.send({ param1: 'alloc', param2: '40', memory_max: '16M' }), ['err', 'done']);
      expect(low.status).toBe('err - OOM - killed at memory_max 16M (peak 16M)');
      const high = await q.oom.waitState(await q.oom.send({ param1: 'alloc', param2: '128', memory_max: '1G' }), ['err', 'done']);
      expect(high.status).toBe('err - OOM - killed at memory_max 64M (peak 64M)');
      // The cgroups those runs had are used again: the next run is not taken for one killed before it, and has its whole limit.
      const after = await q.oom.waitState(await q.oom.send({ param1: 'alloc', param2: '40' }), ['err', 'done']);
      expect(after.state).toBe('done');
      expect((await runEnd(after)).usage.memory_peak_bytes).toBeGreaterThan(40 * 1024 * 1024);
    },
    T,
  );

  it(
    'pids_max 32 contains a fork loop: at most 32 processes, the run ends, nothing is left running',
    async () => {
      const m = await q.bomb.waitState(await q.bomb.send({ param1: 'forks', param2: '500' }), ['done', 'err']);
      const made = Number(/forked (\d+)/.exec(m.status)?.[1]);
      expect(made).toBeGreaterThan(0);
      expect(made).toBeLessThan(32);
      const end = await runEnd(m);
      expect(end.usage.pids_peak).toBeLessThanOrEqual(32);
      expect(end.usage.pids_refused).toBeGreaterThanOrEqual(1);
      // Its children, sleeping for a minute, are ended with the run (kill_grace 0).
      await waitFor(async () => !(await leftIn((homes.pids as { dir: string }).dir, 'rq-bomb-')), 'the fork loop’s children ended');
    },
    T,
  );

  it(
    'cpu_max 0.2: a busy loop gets at most 0.25 of a core over 5 s, and its throttling is accounted',
    async () => {
      // 5 s, not less: the script's CPU includes python's start, which its wall time does not (2 s once read 0.255).
      const m = await q.slow.waitState(await q.slow.send({ param1: 'spin', param2: '5' }), ['done', 'err'], T);
      const cores = Number(/cpu ([\d.]+) cores/.exec(m.status)?.[1]);
      expect(cores).toBeGreaterThan(0.05);
      expect(cores).toBeLessThanOrEqual(0.25);
      expect((await runEnd(m)).usage.throttled_ms).toBeGreaterThan(500);
    },
    T,
  );

  it.each(['acct', 'plain'])(
    'the accounted CPU time and peak memory of a run (%s) match what the kernel tells the process itself, within 10 %%',
    async (name) => {
      const m = await q[name].waitState(await q[name].send({ param1: 'account', param2: '200' }), ['done', 'err'], T);
      expect(m.state).toBe('done');
      const own = JSON.parse((await stdio(m)).split('\n').find((l) => l.startsWith('{'))!) as { cpu_ms: number; maxrss_bytes: number };
      const { usage } = await runEnd(m);
      expect(usage.source).toBe(name === 'acct' ? 'cgroup' : 'rusage');
      expect(Math.abs(usage.cpu_user_ms + usage.cpu_system_ms - own.cpu_ms)).toBeLessThanOrEqual(own.cpu_ms * 0.1 + 10);
      expect(Math.abs(usage.memory_peak_bytes - own.maxrss_bytes)).toBeLessThanOrEqual(own.maxrss_bytes * 0.1);
    },
    T,
  );

  it(
    'a limit the host cannot enforce (io_weight where no disk is scheduled by bfq): the queue names it in SCRIPTERROR and runs nothing; best-effort runs',
    async () => {
      const [, status] = await q.weighed.cmd('status_detail');
      expect(status).toEqual({
        status: 'SCRIPTERROR',
        reason: expect.stringMatching(/^run limits cannot be enforced here: io_weight: /),
      });
      const id = await q.weighed.send({ param1: 'alloc', param2: '1' });
      const held = (await q.weighed.cmd('get_message', { msg_id: id }))[1];
      expect(held.state).toBe('que');
      const ran = await q.besteffort.waitState(await q.besteffort.send({ param1: 'alloc', param2: '1' }), ['done', 'err']);
      expect(ran.state).toBe('done');
      // What it went without is in its history, as a message's own limits are.
      expect((await runEnd(ran)).limits_unenforced).toEqual([expect.stringMatching(/^io_weight: /)]);
      // A message's own limit the host cannot enforce, on a queue that requires none: it runs without it.
      const own = await q.plain.waitState(await q.plain.send({ param1: 'alloc', param2: '1', io_weight: 200 }), ['done', 'err']);
      expect(own.state).toBe('done');
      expect((await runEnd(own)).limits_unenforced).toEqual([expect.stringMatching(/^io_weight: /)]);
    },
    T,
  );
});

describe.skipIf(NO_V1 !== undefined)('run limits across a crash of the queue process', () => {
  it(
    "a queue process KILLed while a limited run holds memory: its next start ends the run's processes and removes its cgroups",
    async () => {
      const root = await makeRoot();
      try {
        await addQueue(root.root, 'crash', { script: LIMITS_PY, extra: { memory_max: '64M', kill_grace: 0 } });
        const first = await QueueProc.start(root.root, 'crash');
        const id = await first.send({ param1: 'hold', param2: '16' });
        const status = await waitFor(async () => {
          const s = JSON.stringify(await first.cmd('get_message_status', { msg_id: id }));
          return /holding (\d+)/.test(s) && s;
        }, 'the run to hold its memory');
        const script = Number(/holding (\d+)/.exec(status)![1]);
        const memory = (homes.memory as { dir: string }).dir;
        const parent = (await fs.readdir(memory)).find((d) => d.startsWith('rq-crash-'))!;
        expect(await fs.readdir(path.join(memory, parent), { withFileTypes: true }).then((es) => es.filter((e) => e.isDirectory()).length)).toBe(1);
        await first.kill9();
        expect(pidAlive(script)).toBe(true);
        // Paused, so the recovered message waits in the que instead of running again.
        await fs.writeFile(path.join(root.root, 'config', 'crash.pause'), '');
        const second = await QueueProc.start(root.root, 'crash');
        try {
          expect(pidAlive(script)).toBe(false);
          const left = (await fs.readdir(path.join(memory, parent), { withFileTypes: true })).filter((e) => e.isDirectory());
          expect(left).toEqual([]);
        } finally {
          await second.stop();
        }
      } finally {
        await root.cleanup();
      }
    },
    T,
  );
});

/** Whether a run cgroup under the queue's parent named `prefix…` in `dir` still has a process. */
async function leftIn(dir: string, prefix: string): Promise<boolean> {
  for (const parent of (await fs.readdir(dir)).filter((d) => d.startsWith(prefix))) {
    for (const run of await fs.readdir(path.join(dir, parent), { withFileTypes: true })) {
      if (!run.isDirectory()) continue;
      const procs = await fs.readFile(path.join(dir, parent, run.name, 'cgroup.procs'), 'utf8').catch(() => '');
      if (
        procs
          .split('\n')
          .filter(Boolean)
          .some((p) => pidAlive(Number(p)))
      )
        return true;
    }
  }
  return false;
}
