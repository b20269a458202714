// memory_high on the host's cgroup v1 memory hierarchy: a run past it is held by the kernel and let on a step at a time (its accounting says so), killed at memory_max, and a crash while held leaves nothing.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownV1Homes } from '../../../src/queue/launch/cgroup-v1.js';
import { HIGH_POLL_MS } from '../../../src/queue/launch/memory-high.js';
import { usageWords } from '../../../src/ipc/history-words.js';
import { QueueProc, addQueue, makeRoot, pidAlive, waitFor } from '../../helpers/rq-root.js';
import { LIMITS_PY, limitQueues } from './limit-queues.js';

const home = ownV1Homes().memory;
const MEMORY = home && 'dir' in home ? home.dir : undefined;
const MiB = 1024 * 1024;
const T = 30_000;

const QUEUES: Record<string, Record<string, unknown>> = {
  capped: { memory_high: '32M', memory_max: '64M' },
  high: { memory_high: '32M' },
  plain: {},
};

const tookMs = (status: string) => Number(/allocated in (\d+) ms/.exec(status)?.[1]);

/** The memory cgroups of queue `name`'s runs, and whether the kernel holds one now (`under_oom 1`). */
async function heldRun(name: string): Promise<string | undefined> {
  const parent = (await fs.readdir(MEMORY!)).find((d) => d.startsWith(`rq-${name}-`));
  if (!parent) return undefined;
  for (const run of await fs.readdir(path.join(MEMORY!, parent), { withFileTypes: true })) {
    if (!run.isDirectory()) continue;
    const dir = path.join(MEMORY!, parent, run.name);
    if (/under_oom 1/.test(await fs.readFile(path.join(dir, 'memory.oom_control'), 'utf8').catch(() => ''))) return dir;
  }
  return undefined;
}

describe.skipIf(MEMORY === undefined)(`memory_high${MEMORY ? '' : ' (skipped: no usable cgroup v1 memory hierarchy)'}`, () => {
  const { q, runEnd } = limitQueues(QUEUES, T);

  it(
    'memory_high 32M: a run allocating 48M is held first, then finishes; its usage says how often and how long, and the script waited that long',
    async () => {
      const [, status] = await q.high.cmd('status_detail');
      expect(status).toMatchObject({ status: 'UP' });
      const m = await q.high.waitState(await q.high.send({ param1: 'alloc_timed', param2: '48' }), ['done', 'err']);
      expect(m.state).toBe('done');
      const { usage } = await runEnd(m);
      expect(usage.source).toBe('cgroup');
      expect(usage.memory_peak_bytes).toBeGreaterThan(48 * MiB);
      expect(usage.memory_high_holds).toBeGreaterThanOrEqual(1);
      // Held at least from one look to the next, and the script's own clock saw its allocation wait that long.
      expect(usage.memory_high_held_ms).toBeGreaterThanOrEqual(HIGH_POLL_MS - 10);
      expect(tookMs(m.status)).toBeGreaterThanOrEqual(usage.memory_high_held_ms - 10);
      // In words in rq history and on the message page.
      expect(usageWords(usage)).toMatch(/, held \d+\.\d+s at memory_high \(\d+ times?\)$/);
      // The same allocation where nothing holds it: no hold in its usage.
      const free = await q.plain.waitState(await q.plain.send({ param1: 'alloc_timed', param2: '48', memory_max: '256M' }), ['done', 'err']);
      expect((await runEnd(free)).usage.memory_high_holds).toBeUndefined();
    },
    T,
  );

  it(
    'back below memory_high, the ceiling is too: an allocation made again after the first was freed is held again, step by step',
    async () => {
      const holds = async (param3: string) => {
        const m = await q.high.waitState(await q.high.send({ param1: 'alloc_timed', param2: '48', param3 }), ['done', 'err']);
        expect(m.state).toBe('done');
        return (await runEnd(m)).usage.memory_high_holds as number;
      };
      const once = await holds('once');
      // Each 4M step past 32M is one hold: the second allocation takes them again only if the ceiling came back down.
      expect(once).toBeGreaterThanOrEqual(3);
      expect(await holds('twice')).toBeGreaterThanOrEqual(once * 1.5);
    },
    T,
  );

  it(
    'memory_high 32M and memory_max 64M: 1 GiB is held at 32M, let on, and killed at 64M with the OOM status; the next run in the same cgroups is held again',
    async () => {
      const started = Date.now();
      const m = await q.capped.waitState(await q.capped.send({ param1: 'alloc', param2: '1024' }), ['err', 'done']);
      expect(Date.now() - started).toBeLessThan(4000);
      expect(m.status).toBe('err - OOM - killed at memory_max 64M (peak 64M)');
      const { usage } = await runEnd(m);
      expect(usage).toMatchObject({ oom_kills: 1, memory_high_holds: expect.any(Number) });
      expect(usage.memory_high_holds).toBeGreaterThanOrEqual(1);
      const next = await q.capped.waitState(await q.capped.send({ param1: 'alloc_timed', param2: '40' }), ['err', 'done']);
      expect(next.state).toBe('done');
      expect((await runEnd(next)).usage.memory_high_holds).toBeGreaterThanOrEqual(1);
    },
    T,
  );
});

describe.skipIf(MEMORY === undefined)('memory_high across a crash of the queue process', () => {
  it(
    'a queue process KILLed while the kernel holds its run at memory_high: the run stays held (it grows no more), and the next start ends it and removes its cgroups',
    async () => {
      const root = await makeRoot();
      try {
        await addQueue(root.root, 'heldcrash', { script: LIMITS_PY, extra: { memory_high: '16M', kill_grace: 0 } });
        const first = await QueueProc.start(root.root, 'heldcrash');
        await first.waitState(await first.send({ param1: 'hold', param2: '64' }), ['run']);
        // The queue lets a held run on a step at a time (64M is a dozen steps past 16M): stopped now, it lets the run on no more.
        first.child.kill('SIGSTOP');
        const dir = await waitFor(() => heldRun('heldcrash'), 'the run to be held at memory_high');
        const pids = (await fs.readFile(path.join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number);
        await first.kill9();
        expect(pids.length).toBeGreaterThan(0);
        expect(pids.every(pidAlive)).toBe(true);
        const [usage, ceiling] = await Promise.all(
          ['usage_in_bytes', 'limit_in_bytes'].map(async (f) => Number(await fs.readFile(path.join(dir, `memory.${f}`), 'utf8'))),
        );
        expect(ceiling).toBeLessThan(64 * MiB);
        expect(usage).toBeLessThanOrEqual(ceiling);
        await fs.writeFile(path.join(root.root, 'config', 'heldcrash.pause'), '');
        const second = await QueueProc.start(root.root, 'heldcrash');
        try {
          await waitFor(() => !pids.some(pidAlive), 'the held processes to be ended');
          await expect(fs.access(dir)).rejects.toThrow();
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
