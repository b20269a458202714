// A queue config's cron `schedule`: one message per occurrence, on time, and none doubled or flooded across restarts.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CreateFields, Message } from '../../../src/message/message.js';
import { silentLogger } from '../../../src/log.js';
import { idTime } from '../../../src/message/message-id.js';
import { QueueCron } from '../../../src/queue/cron/queue-cron.js';
import { type CronRecord, cronKey, cronStateFile, readCronState } from '../../../src/queue/cron/cron-state.js';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { budget } from '../../helpers/time-budget.js';

/** A stand-in for the Queue: records creates and commits. */
class FakeQueue {
  readonly name = 'cq';
  readonly prep = new Set<string>();
  readonly created: { fields: CreateFields; commit: boolean }[] = [];
  readonly committed: string[] = [];
  down = false;
  isDown(): boolean {
    return this.down;
  }

  hasPrep(id: string): boolean {
    return this.prep.has(id);
  }
  async create(fields: CreateFields, commit: boolean): Promise<Message> {
    const msg_id = `id${this.created.length + 1}`;
    this.created.push({ fields, commit });
    if (!commit) this.prep.add(msg_id);
    return { ...fields, msg_id, orig_msg_id: msg_id, count: 0, max_count: 15, due: fields.due ?? 0 };
  }
  async commit(id: string): Promise<boolean> {
    if (!this.prep.delete(id)) return false;
    this.committed.push(id);
    return true;
  }
}

describe('cron schedule in the queue process (fake queue)', () => {
  let dir: string;
  let cron: QueueCron | undefined;
  // 12:34:56 local time: the */10 minute entry's latest occurrence is 12:30:00.
  const NOW = new Date(2030, 5, 1, 12, 34, 56).getTime();
  const at = (h: number, m: number) => new Date(2030, 5, 1, h, m, 0).getTime() / 1000;
  const entry = { cron: '*/10 * * * *', param1: 'ten' };

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-cron-'));
  });
  afterEach(async () => {
    await cron?.stop();
    cron = undefined;
    await fs.rm(dir, { recursive: true, force: true });
  });

  const start = async (q: FakeQueue, records?: CronRecord[]) => {
    if (records) await fs.writeFile(cronStateFile(dir), JSON.stringify({ schedule: records }));
    cron = new QueueCron({ queue: q, stateFile: cronStateFile(dir), log: silentLogger(), now: () => NOW });
    await cron.start([entry]);
  };
  const record = (over: Partial<CronRecord>): CronRecord => ({
    key: cronKey(entry, 0),
    cron: entry.cron,
    params: { param1: 'ten' },
    since: at(9, 0),
    last: null,
    msg_id: null,
    ...over,
  });

  it('remembers a new entry from now on without creating anything for the past', async () => {
    const q = new FakeQueue();
    await start(q);
    expect(q.created).toEqual([]);
    const [r] = await readCronState(cronStateFile(dir));
    expect(r).toMatchObject({ cron: '*/10 * * * *', params: { param1: 'ten' }, since: Math.floor(NOW / 1000), last: null, msg_id: null });
    expect(cron!.upcoming()).toEqual([{ cron: '*/10 * * * *', next: at(12, 40) * 1000 }]);
    // Operators cat it: indented, and its last line ends like any text file's, so the prompt does not follow on.
    const text = await fs.readFile(cronStateFile(dir), 'utf8');
    expect(text).toBe(`${JSON.stringify({ schedule: [r] }, null, 1)}\n`);
    expect(text.endsWith('}\n')).toBe(true);
  });

  it('creates exactly one message, for the latest occurrence missed while stopped', async () => {
    const q = new FakeQueue();
    await start(q, [record({ last: at(10, 0), msg_id: 'old' })]);
    expect(q.created).toEqual([{ fields: { dest: 'cq', src: 'cron', due: at(12, 30), param1: 'ten' }, commit: false }]);
    expect(q.committed).toEqual(['id1']);
    const [r] = await readCronState(cronStateFile(dir));
    expect(r).toMatchObject({ last: at(12, 30), msg_id: 'id1' });
  });

  it('creates nothing when the latest occurrence already has its message', async () => {
    const q = new FakeQueue();
    await start(q, [record({ last: at(12, 30), msg_id: 'done-already' })]);
    expect(q.created).toEqual([]);
  });

  it('commits the message an interrupted fire left in prep instead of creating another', async () => {
    const q = new FakeQueue();
    q.prep.add('left');
    await start(q, [record({ last: at(12, 30), msg_id: 'left' })]);
    expect(q.committed).toEqual(['left']);
    expect(q.created).toEqual([]);
  });

  it('skips an occurrence while the queue is DOWN, and remembers it as handled', async () => {
    const q = new FakeQueue();
    q.down = true;
    await start(q, [record({ last: at(12, 0) })]);
    expect(q.created).toEqual([]);
    const [r] = await readCronState(cronStateFile(dir));
    expect(r).toMatchObject({ last: at(12, 30), msg_id: null });
  });

  it('writes no cron.json for a queue without a schedule', async () => {
    cron = new QueueCron({ queue: new FakeQueue(), stateFile: cronStateFile(dir), log: silentLogger(), now: () => NOW });
    await cron.start([]);
    await expect(fs.access(cronStateFile(dir))).rejects.toThrow();
  });

  it('ignores an entry with a bad expression and keeps the others', async () => {
    const q = new FakeQueue();
    cron = new QueueCron({ queue: q, stateFile: cronStateFile(dir), log: silentLogger(), now: () => NOW });
    await cron.start([{ cron: 'every day' }, entry]);
    expect(cron.upcoming()).toEqual([{ cron: '*/10 * * * *', next: at(12, 40) * 1000 }]);
  });
});

describe('cron schedule in a real queue process', () => {
  const ctx = perTestRoot();

  interface Got {
    id: string;
    due: number;
    created: number;
  }
  const list = async (proc: QueueProc): Promise<Got[]> => {
    const que = (await proc.cmd('messages', { state: 'que', limit: 1000 })) as [string, number][];
    return que.map(([id, due]) => ({ id, due: Number(due), created: idTime(id)! })).sort((a, b) => a.due - b.due);
  };
  const atLeast = (proc: QueueProc, n: number) =>
    waitFor(
      async () => {
        const got = await list(proc);
        return got.length >= n ? got : false;
      },
      `${n} cron messages`,
      20_000,
      50,
    );

  it('creates one message per occurrence, on time, and exactly one for the occurrences missed across a restart', async () => {
    await addQueue(ctx.t.root, 'cq');
    const cfgFile = path.join(ctx.t.root, 'queues', 'cq', 'config.json');
    const cfg = JSON.parse(await fs.readFile(cfgFile, 'utf8'));
    await fs.writeFile(cfgFile, JSON.stringify({ ...cfg, schedule: [{ cron: '*/2 * * * * *', param1: 'tick', param2: 5 }] }));
    // Paused: every message waits in que where it can be counted.
    await fs.writeFile(path.join(ctx.t.root, 'config', 'cq.pause'), '');

    ctx.q = await QueueProc.start(ctx.t.root, 'cq');
    const first = await atLeast(ctx.q!, 2);
    const msg = (await ctx.q.cmd('get_message', { msg_id: first[0].id }))[1];
    expect(msg).toMatchObject({ src: 'cron', dest: 'cq', param1: 'tick', param2: '5' });

    // Killed outright: the state on disk, not a clean shutdown, must prevent doubles.
    await ctx.q.kill9();
    const restarts = [Date.now()];
    ctx.q = await QueueProc.start(ctx.t.root, 'cq');
    await waitFor(async () => (await list(ctx.q!)).some((g) => g.created > restarts[0] + 2500), 'a fire after the first restart', 20_000, 50);
    // Stopped long enough for at least two occurrences to pass.
    await ctx.q.stop();
    const stoppedAt = Date.now();
    await waitFor(() => Date.now() - stoppedAt > 4500, 'two occurrences to pass', 10_000, 100);
    restarts.push(Date.now());
    ctx.q = await QueueProc.start(ctx.t.root, 'cq');
    const all = await waitFor(
      async () => {
        const got = await list(ctx.q!);
        return got.some((g) => g.created > restarts[1] + 2500) ? got : false;
      },
      'a fire after the second restart',
      20_000,
      50,
    );

    const dues = all.map((g) => g.due);
    // Never two messages for one occurrence; occurrences are even seconds.
    expect(new Set(dues).size).toBe(dues.length);
    expect(dues.every((d) => Number.isInteger(d) && d % 2 === 0)).toBe(true);
    const steps = dues.slice(1).map((d, i) => d - dues[i]);
    // Regular fires are 2 s apart; only the restarts may skip occurrences, the long stop must.
    const skips = steps.filter((d) => d !== 2);
    expect(skips.length).toBeGreaterThanOrEqual(1);
    expect(skips.length).toBeLessThanOrEqual(2);
    expect(skips.every((d) => d >= 4)).toBe(true);
    // The stop missed two or more occurrences and got one message, for the latest of them.
    const catchUp = all.find((g) => g.created > restarts[1])!;
    expect(catchUp.due * 1000).toBeGreaterThan(stoppedAt);
    expect(catchUp.due * 1000).toBeLessThanOrEqual(catchUp.created);
    // The latest occurrence before the queue came back, not an older one: by order, not by how fast the start was.
    expect(catchUp.due * 1000).toBeGreaterThan(restarts[1] - 2000);
    const prev = all[all.indexOf(catchUp) - 1];
    expect(catchUp.due - prev.due).toBeGreaterThanOrEqual(4);
    // Every other fire (not the first after a restart) is created within 100 ms of its occurrence.
    const firstAfter = new Set(restarts.map((r) => all.find((g) => g.created > r)?.id));
    for (const g of all.filter((x) => !firstAfter.has(x.id))) {
      expect(g.created - g.due * 1000, `${g.id} lateness`).toBeGreaterThanOrEqual(0);
      expect(g.created - g.due * 1000, `${g.id} lateness`).toBeLessThan(budget(100));
    }
    const [state] = await readCronState(cronStateFile(path.join(ctx.t.root, 'queues', 'cq')));
    expect(state.last).toBe(Math.max(...dues));
    expect(all.map((g) => g.id)).toContain(state.msg_id);
  });
});
