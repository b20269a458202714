// Concurrency limits across queues with real processes (rq-beyond §B12, §B17, §B18.9): a real rq-mgr, real queue
// processes and scripts; "never more than N" is checked from outside rq, by sampling /proc for RQ_LIMIT.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { mgrCommand } from '../../src/ipc/rq1.js';
import { idTime } from '../../src/message/message-id.js';
import { LimitSampler, type SampleReport } from '../helpers/limit-sampler.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { alive, killLeftoverGroups, newPidInFile, pidInFile } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';

interface KeyStatus {
  concurrency: number;
  source: 'config' | 'message';
  holders: { ref: string; queue: string; since: number; granted_at: number; orphaned?: true }[];
  waiting: { ref: string; queue: string; since: number; position: number }[];
}
interface HistoryEntry {
  at: string;
  from?: string;
  to?: string;
  event?: string;
  [k: string]: unknown;
}

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

/** One root's rq-mgr and the socket calls the tests make through it. */
class Limits {
  constructor(
    readonly root: string,
    public mgr: MgrProc,
  ) {}

  async send(queue: string, fields: Record<string, unknown>): Promise<string> {
    const r = await this.mgr.q(queue, 'create_message', { dest: queue, ...fields });
    if (r[0] !== 'ok') throw new Error(`create_message on ${queue} failed: ${JSON.stringify(r)}`);
    return String(r[1]).split('/').pop()!;
  }

  /** Waits (on the queue's wait_message) until the message is finished; its state and status text. */
  async finish(queue: string, id: string, timeoutMs = 20_000): Promise<{ state: string; status: string }> {
    return waitFor(async () => {
      const r = await this.mgr.q(queue, 'wait_message', { msg_id: id, timeout: 5 });
      return r[0] === 'ok' ? r[1] : false;
    }, `${queue}/${id} to finish`, timeoutMs);
  }

  async status(key: string): Promise<KeyStatus | undefined> {
    const r = await this.mgr.cmd('limit_status', JSON.stringify({ key }));
    expect(r[0]).toBe('ok');
    return r[1][key];
  }

  /** Waits for the key's table entry to satisfy `ok` (undefined: the key is forgotten, nothing held or waiting). */
  async statusWhen(key: string, ok: (s: KeyStatus | undefined) => boolean, label: string, timeoutMs = 10_000, everyMs = 20): Promise<KeyStatus | undefined> {
    let last: KeyStatus | undefined;
    try {
      await waitFor(async () => ok((last = await this.status(key))), label, timeoutMs, everyMs);
    } catch (err) {
      throw new Error(`${(err as Error).message} (last limit_status of ${key}: ${JSON.stringify(last)})`, { cause: err });
    }
    return last;
  }

  /** Waits until the key's waiting line is exactly `refs`, in that order. */
  async line(key: string, refs: string[], label = `the line of ${key}`): Promise<KeyStatus | undefined> {
    return this.statusWhen(key, (s) => JSON.stringify((s?.waiting ?? []).map((w) => w.ref)) === JSON.stringify(refs), `${label} to be ${refs.join(', ')}`);
  }

  async history(queue: string, id: string): Promise<HistoryEntry[]> {
    const r = await this.mgr.q(queue, 'get_history', { msg_id: id });
    expect(r[0]).toBe('ok');
    return r[1];
  }

  /** Epoch ms of each que → run line of the message. */
  async starts(queue: string, id: string): Promise<number[]> {
    return (await this.history(queue, id)).filter((e) => e.from === 'que' && e.to === 'run').map((e) => Date.parse(e.at));
  }

  async getMessage(queue: string, id: string): Promise<Record<string, unknown>> {
    const r = await this.mgr.q(queue, 'get_message', { msg_id: id });
    expect(r[0]).toBe('ok');
    return r[1];
  }

  pidFile(name: string): string {
    return path.join(this.root, 'pids', `${name}.pid`);
  }

  /** The pid a `forever` script wrote to its file (its process group), once it is there. */
  async scriptPid(name: string): Promise<number> {
    const pid = await pidInFile(this.pidFile(name));
    groups.push(pid);
    return pid;
  }

  /**
   * Waits until rq-mgr's settling window is over (rq-beyond §B12.2): a probe holder of a key of its
   * own is parked while it settles and granted after. Its grant goes to a queue that does not exist,
   * which only logs a warning; the probe is released at once.
   */
  async settled(): Promise<void> {
    const probe = { key: 'test:settle-probe', holder: 'probe/20200101.0000.00.000.1' };
    const r = await this.mgr.cmd('limit_acquire', JSON.stringify({ ...probe, since: 0, concurrency: 1 }));
    expect(['granted', 'wait']).toContain(r[0]);
    await this.statusWhen(probe.key, (s) => s?.holders.length === 1, 'rq-mgr to settle', 10_000);
    expect(await this.mgr.cmd('limit_release', JSON.stringify(probe))).toEqual(['ok']);
  }
}

/** Kills a script's whole process group (what a crash of it would look like to rq). */
function killGroup(pgid: number): void {
  process.kill(-pgid, 'SIGKILL');
}

async function writeLimits(root: string, table: Record<string, unknown> | string): Promise<void> {
  const file = rootPaths(root).limitsFile;
  // Written aside and renamed in, so rq-mgr's watch never reads half a file.
  await fs.writeFile(`${file}.tmp`, typeof table === 'string' ? table : JSON.stringify(table));
  await fs.rename(`${file}.tmp`, file);
}

/** The finished message's job/stdio.log (done/ is hashed by date). */
async function stdioOf(root: string, queue: string, id: string): Promise<string> {
  const done = queuePaths(root, queue).state.done;
  const rel = (await fs.readdir(done, { recursive: true })).find((p) => p.endsWith(path.join(id, 'job', 'stdio.log')));
  if (!rel) throw new Error(`no stdio.log of ${queue}/${id} under ${done}`);
  return fs.readFile(path.join(done, rel), 'utf8');
}

function expectNoOverlap(report: SampleReport, allowed: number, note = ''): void {
  expect(report.over, `more than ${allowed} scripts held the key at once ${note}`).toEqual([]);
  expect(report.samples).toBeGreaterThan(0);
}

const SHARED_LIMITS = { reports: 2, 'api:*': 1, fifo: 1, pz: 1, pg: 1, grow: 1 };

describe('one rq-mgr, several queues sharing keys', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await writeLimits(t.root, SHARED_LIMITS);
    for (const q of ['r1', 'r2', 'r3']) await addQueue(t.root, q, { num_workers: 3 });
    for (const q of ['f1', 'f2', 'f3']) await addQueue(t.root, q, { num_workers: 2 });
    await addQueue(t.root, 't1', { num_workers: 4 });
    await addQueue(t.root, 't2', { num_workers: 1, extra: { limit: 'api:{queue}-{param1}' } });
    await addQueue(t.root, 'pa', { num_workers: 2 });
    await addQueue(t.root, 'pb', { num_workers: 3 });
    await addQueue(t.root, 'pc', { num_workers: 1 });
    await addQueue(t.root, 'g1', { num_workers: 5 });
    const mgr = await MgrProc.start(t.root);
    L = new Limits(t.root, mgr);
    for (const q of ['r1', 'r2', 'r3', 'f1', 'f2', 'f3', 't1', 't2', 'pa', 'pb', 'pc', 'g1']) await mgr.waitQueueUp(q);
    await L.settled();
  });
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
    for (const s of report.scripts) expect(sent.map(([, id]) => id), rnd.replay).toContain(s.msgId);
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
    expect(await L.status('api:acme')).toMatchObject({ concurrency: 1, source: 'config', holders: [{ ref: `t1/${a1}` }], waiting: [{ ref: `t1/${a2}`, position: 1 }] });
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

  it('refuses a bad limit at create with the §B1.12 texts, and creates nothing', async () => {
    const inUse = await L.send('r1', { param1: 'forever', param2: L.pidFile('adhoc'), limit: 'adhoc', limit_concurrency: 2 });
    const inUsePid = await L.scriptPid('adhoc');
    expect(await L.status('adhoc')).toMatchObject({ concurrency: 2, source: 'message', holders: [{ ref: `r1/${inUse}` }] });

    const counts = await L.mgr.q('r1', 'num_messages');
    const dirs = async () => Object.fromEntries(await Promise.all((['prep', 'que', 'run'] as const).map(async (s) => [s, (await fs.readdir(queuePaths(t.root, 'r1').state[s])).sort()])));
    const before = await dirs();
    const cases: [Record<string, unknown>, string][] = [
      [{ limit: 'api:{param5}' }, 'limit: the template names an unknown field {param5} (use {param1}..{param4} or {queue})'],
      [{ limit: 'nokey' }, 'limit: key "nokey" has no concurrency: add it to config/limits.json or send limit_concurrency'],
      [{ limit: 'reports', limit_concurrency: 3 }, 'limit_concurrency: key "reports" has concurrency 2 (config/limits.json), received 3'],
      [{ limit: 'api:x', limit_concurrency: 5 }, 'limit_concurrency: key "api:x" has concurrency 1 (config/limits.json), received 5'],
      [{ limit: 'nokey', limit_concurrency: 0 }, 'limit_concurrency: expected a whole number 1-10000, received 0'],
      [{ limit: '' }, 'limit: expected a key of 1-256 characters without control characters, received ""'],
    ];
    for (const [fields, text] of cases) {
      expect(await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', ...fields }), JSON.stringify(fields)).toEqual(['fail', text]);
    }
    // A concurrency a message gave is known while the key is in use: another value is refused.
    const conflict = await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', limit: 'adhoc', limit_concurrency: 3 });
    expect(conflict[0]).toBe('fail');
    expect(conflict[1]).toMatch(/^limit_concurrency: key "adhoc" has concurrency 2 \(.+\), received 3$/);

    expect(await L.mgr.q('r1', 'num_messages')).toEqual(counts);
    expect(await dirs()).toEqual(before);
    for (const key of ['nokey', 'api:x', 'api:{param5}']) expect(await L.status(key)).toBeUndefined();
    expect(await L.status('adhoc')).toMatchObject({ concurrency: 2, holders: [{ ref: `r1/${inUse}` }], waiting: [] });

    // The same value, or none, is taken while the key is known.
    const same = await L.send('r1', { param1: 'done', limit: 'adhoc', limit_concurrency: 2 });
    const none = await L.send('r1', { param1: 'done', limit: 'adhoc' });
    for (const id of [same, none]) expect(await L.finish('r1', id)).toMatchObject({ state: 'done' });
    killGroup(inUsePid);
    expect(await L.finish('r1', inUse)).toMatchObject({ state: 'err' });
    await L.statusWhen('adhoc', (s) => s === undefined, 'adhoc to be forgotten');
    // Forgotten with its last user: a key nobody uses has no concurrency any more.
    expect(await L.mgr.q('r1', 'create_message', { dest: 'r1', param1: 'done', limit: 'adhoc' })).toEqual([
      'fail',
      'limit: key "adhoc" has no concurrency: add it to config/limits.json or send limit_concurrency',
    ]);
  });

  it('pausing a queue withdraws its waiters (others move up); on resume they ask again with the same since', async () => {
    const holder = await L.send('pb', { param1: 'forever', param2: L.pidFile('pz-holder'), limit: 'pz' });
    const holderPid = await L.scriptPid('pz-holder');
    const p = await L.send('pa', { param1: 'done', limit: 'pz' });
    await L.line('pz', [`pa/${p}`]);
    const w = await L.send('pb', { param1: 'forever', param2: L.pidFile('pz-w'), limit: 'pz' });
    await L.line('pz', [`pa/${p}`, `pb/${w}`]);

    expect(await L.mgr.cmd('pause_queue', 'pa')).toEqual(['ok', 'pa']);
    await L.line('pz', [`pb/${w}`], 'pa paused: its waiter withdrawn');
    expect((await L.mgr.q('pa', 'waiting', { reason: 'limit' }))[1]).toEqual([]);
    expect(await L.mgr.q('pa', 'get_message_state', { msg_id: p })).toEqual(['ok', 'que']);
    const x = await L.send('pb', { param1: 'done', limit: 'pz' });
    await L.line('pz', [`pb/${w}`, `pb/${x}`]);

    killGroup(holderPid);
    const wPid = await L.scriptPid('pz-w');
    await L.line('pz', [`pb/${x}`]);
    expect(await L.finish('pb', holder)).toMatchObject({ state: 'err' });

    expect(await L.mgr.cmd('resume_queue', 'pa')).toEqual(['ok', 'pa']);
    // p was made before x: back in line, it goes ahead of x.
    const st = await L.line('pz', [`pa/${p}`, `pb/${x}`], 'pa resumed');
    expect(st!.waiting[0].since).toBe(idTime(p));
    expect(st!.holders.map((h) => h.ref)).toEqual([`pb/${w}`]);

    killGroup(wPid);
    expect(await L.finish('pb', w)).toMatchObject({ state: 'err' });
    expect(await L.finish('pa', p)).toMatchObject({ state: 'done' });
    expect(await L.finish('pb', x)).toMatchObject({ state: 'done' });
    const [pStart] = await L.starts('pa', p);
    const [xStart] = await L.starts('pb', x);
    expect(pStart).toBeLessThan(xStart);
    expect((await L.history('pa', p)).filter((e) => e.event).map((e) => e.event)).toEqual(['limit_wait', 'limit_wait', 'limit_grant']);
    await L.statusWhen('pz', (s) => s === undefined, 'pz to be free');
  });

  it('pausing a queue gives back a slot granted to a message it had no worker for; another queue takes it; after resume it runs', async () => {
    const holder = await L.send('pb', { param1: 'forever', param2: L.pidFile('pg-holder'), limit: 'pg' });
    const holderPid = await L.scriptPid('pg-holder');
    // g parks (it holds no worker while it waits), then an unlimited script takes pc's only worker.
    const g = await L.send('pc', { param1: 'done', limit: 'pg' });
    await L.line('pg', [`pc/${g}`]);
    const u = await L.send('pc', { param1: 'forever', param2: L.pidFile('pc-busy') });
    const uPid = await L.scriptPid('pc-busy');
    const w = await L.send('pb', { param1: 'slow', param2: '0.2', limit: 'pg' });
    await L.line('pg', [`pc/${g}`, `pb/${w}`]);

    // The holder goes: g is granted, but pc has no free worker to start it.
    killGroup(holderPid);
    await L.statusWhen('pg', (s) => s?.holders.map((h) => h.ref).join() === `pc/${g}` && s.waiting.length === 1, 'g granted');
    expect(await L.mgr.q('pc', 'get_message_state', { msg_id: g })).toEqual(['ok', 'que']);
    expect((await L.history('pc', g)).filter((e) => e.event).map((e) => e.event)).toEqual(['limit_wait', 'limit_grant']);

    expect(await L.mgr.cmd('pause_queue', 'pc')).toEqual(['ok', 'pc']);
    // The granted slot goes back and pb's waiter runs with it.
    expect(await L.finish('pb', w)).toMatchObject({ state: 'done' });
    expect(await L.mgr.q('pc', 'get_message_state', { msg_id: g })).toEqual(['ok', 'que']);
    await L.statusWhen('pg', (s) => s === undefined, 'pg to be free while pc is paused');

    expect(await L.mgr.cmd('resume_queue', 'pc')).toEqual(['ok', 'pc']);
    killGroup(uPid);
    expect(await L.finish('pc', g)).toMatchObject({ state: 'done' });
    const [wStart] = await L.starts('pb', w);
    const [gStart] = await L.starts('pc', g);
    expect(wStart).toBeLessThan(gStart);
    expect(await L.finish('pc', u)).toMatchObject({ state: 'err' });
    expect(await L.finish('pb', holder)).toMatchObject({ state: 'err' });
    await L.statusWhen('pg', (s) => s === undefined, 'pg to be free');
  });

  it('config/limits.json at runtime: raising promotes waiters at once, an invalid file is logged and the table kept, lowering lets holders finish', async () => {
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) ids.push(await L.send('g1', { param1: 'forever', param2: L.pidFile(`grow-${i}`), limit: 'grow' }));
    const pid1 = await L.scriptPid('grow-1');
    await L.line('grow', [`g1/${ids[1]}`, `g1/${ids[2]}`]);

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: 3 });
    const [pid2, pid3] = [await L.scriptPid('grow-2'), await L.scriptPid('grow-3')];
    expect(await L.status('grow')).toMatchObject({ concurrency: 3, source: 'config', waiting: [] });
    expect((await L.status('grow'))!.holders).toHaveLength(3);

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: '2x' });
    const log = path.join(t.root, 'log', 'mgr-test.log');
    const refused = await waitFor(async () => {
      const lines = (await fs.readFile(log, 'utf8')).split('\n').filter((l) => l.includes('config/limits.json not loaded'));
      return lines.length ? JSON.parse(lines[lines.length - 1]) : false;
    }, 'the invalid limits.json to be logged');
    expect(refused.err).toBe('config/limits.json: "grow": expected a whole number 1-10000, received "2x"');
    expect(await L.status('grow')).toMatchObject({ concurrency: 3, source: 'config' });
    const fourth = await L.send('g1', { param1: 'forever', param2: L.pidFile('grow-4'), limit: 'grow' });
    await L.line('grow', [`g1/${fourth}`], 'a 4th waits: the concurrency is still 3');

    await writeLimits(t.root, { ...SHARED_LIMITS, grow: 1 });
    await L.statusWhen('grow', (s) => s?.concurrency === 1, 'grow lowered to 1');
    // No pre-emption: the three holders keep running.
    expect([pid1, pid2, pid3].map(alive)).toEqual([true, true, true]);
    expect((await L.status('grow'))!.holders).toHaveLength(3);
    killGroup(pid1);
    await L.statusWhen('grow', (s) => s?.holders.length === 2, 'a holder gone');
    killGroup(pid2);
    await L.statusWhen('grow', (s) => s?.holders.length === 1, 'a second holder gone');
    expect((await L.status('grow'))!.waiting.map((w) => w.ref)).toEqual([`g1/${fourth}`]);
    killGroup(pid3);
    const pid4 = await L.scriptPid('grow-4');
    killGroup(pid4);
    for (const id of [...ids, fourth]) expect(await L.finish('g1', id)).toMatchObject({ state: 'err' });
    await L.statusWhen('grow', (s) => s === undefined, 'grow to be free');
    await writeLimits(t.root, SHARED_LIMITS);
  });
});

describe('crashes', () => {
  let t: TestRoot | undefined;
  let L: Limits | undefined;

  async function setUp(limits: Record<string, number>, queues: [string, number, Record<string, unknown>?][]): Promise<Limits> {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await writeLimits(t.root, limits);
    for (const [q, n, extra] of queues) await addQueue(t.root, q, { num_workers: n, extra });
    const mgr = await MgrProc.start(t.root);
    L = new Limits(t.root, mgr);
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
    const L = await setUp({ crash: 2 }, [['ca', 2], ['cb', 3]]);
    const sampler = new LimitSampler(L.root, 'crash', 2).start();
    try {
      const a = [await L.send('ca', { param1: 'forever', param2: L.pidFile('ca-1'), limit: 'crash' })];
      const old1 = await L.scriptPid('ca-1');
      a.push(await L.send('ca', { param1: 'forever', param2: L.pidFile('ca-2'), limit: 'crash' }));
      const old2 = await L.scriptPid('ca-2');
      const b: string[] = [];
      for (let i = 0; i < 3; i++) {
        b.push(await L.send('cb', { param1: 'slow', param2: '0.3', limit: 'crash' }));
        await L.line('crash', b.map((id) => `cb/${id}`));
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
    const L = await setUp({ mk: 2 }, [['ma', 3], ['mb', 3]]);
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
      for (const [i, a] of after.entries()) expect(Math.abs(bySince.indexOf(a.id) - i), `${rnd.replay}: start order ${after.map((a) => a.id)}`).toBeLessThanOrEqual(1);
      await L.statusWhen('mk', (s) => s === undefined, 'mk to be free');
    } finally {
      await sampler.stop();
    }
  });

  it('restart_queue of a queue whose script outlives the 20 s stop grace (kill_grace 30, TERM ignored): its slot is not freed while that script still runs', async () => {
    const L = await setUp({ stuck: 1 }, [['sa', 1, { kill_grace: 30 }], ['sb', 1]]);
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

describe('spec details of waiting messages', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await writeLimits(t.root, { slot: 1 });
    await addQueue(t.root, 'w1', { num_workers: 3 });
    L = new Limits(t.root, await MgrProc.start(t.root));
    await L.mgr.waitQueueUp('w1');
    await L.settled();
  });
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('cancel of a message waiting for a slot: err cancelled at once, its place in line given back', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('cancel-holder'), limit: 'slot' });
    const pid = await L.scriptPid('cancel-holder');
    const c = await L.send('w1', { param1: 'done', limit: 'slot' });
    const after = await L.send('w1', { param1: 'done', limit: 'slot' });
    await L.line('slot', [`w1/${c}`, `w1/${after}`]);
    expect(await L.mgr.q('w1', 'cancel_message', { msg_id: c })).toEqual(['ok', 'msg cancelled']);
    await L.line('slot', [`w1/${after}`], 'the cancelled waiter withdrawn');
    expect(await L.finish('w1', c)).toMatchObject({ state: 'err', status: expect.stringMatching(/^err - CANCELLED/) });
    killGroup(pid);
    expect(await L.finish('w1', after)).toMatchObject({ state: 'done' });
    expect(await L.finish('w1', holder)).toMatchObject({ state: 'err' });
    expect(await L.starts('w1', c)).toEqual([]);
  });

  it('a message waiting for a slot still expires (§B4: "expiry runs … for messages waiting on dependencies or slots"); it never starts', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('expiry-holder'), limit: 'slot' });
    const pid = await L.scriptPid('expiry-holder');
    const e = await L.send('w1', { param1: 'done', limit: 'slot', max_age: 1 });
    await L.line('slot', [`w1/${e}`]);
    try {
      // Due is now (floored to the second): the deadline is at most 1 s away.
      expect(await L.finish('w1', e, 5000).catch((err: Error) => ({ state: 'still waiting', status: err.message }))).toMatchObject({
        state: 'err',
        status: expect.stringMatching(/^err - EXPIRED - not started by \S+ \(max_age 1s after due\)$/),
      });
      await L.line('slot', [], 'the expired waiter withdrawn');
    } finally {
      killGroup(pid);
      await L.finish('w1', holder);
      await L.finish('w1', e);
    }
    expect(await L.starts('w1', e)).toEqual([]);
  });

  it('messages que lists messages waiting for a slot after the ready and delayed ones (§B2), as num_messages counts them', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('list-holder'), limit: 'slot' });
    const pid = await L.scriptPid('list-holder');
    const waiter = await L.send('w1', { param1: 'done', limit: 'slot' });
    const later = await L.send('w1', { param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    await L.line('slot', [`w1/${waiter}`]);
    try {
      expect((await L.mgr.q('w1', 'num_messages')).que).toBe(2);
      const listed = (await L.mgr.q('w1', 'messages', { state: 'que' })) as [string, number][];
      expect(listed.map(([id]) => id)).toEqual([later, waiter]);
    } finally {
      await L.mgr.q('w1', 'cancel_message', { msg_id: later });
      killGroup(pid);
      for (const id of [holder, waiter, later]) await L.finish('w1', id);
    }
  });

  it('get_message_status of a message waiting for a slot says so: que - WAITING FOR SLOT <key> (<n> ahead) (§B1.3)', async () => {
    const holder = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-holder'), limit: 'slot' });
    const pid = await L.scriptPid('slot-holder');
    const first = await L.send('w1', { param1: 'done', limit: 'slot' });
    const second = await L.send('w1', { param1: 'done', limit: 'slot' });
    await L.line('slot', [`w1/${first}`, `w1/${second}`]);
    try {
      expect((await L.mgr.q('w1', 'get_message_status', { msg_id: first }))[1]).toMatchObject({ state: 'que', status: 'que - WAITING FOR SLOT slot (0 ahead)' });
      expect((await L.mgr.q('w1', 'get_message_status', { msg_id: second }))[1]).toMatchObject({ state: 'que', status: 'que - WAITING FOR SLOT slot (1 ahead)' });
    } finally {
      killGroup(pid);
      for (const id of [holder, first, second]) await L.finish('w1', id);
    }
  });

  it("limit_held, rq-mgr's sweep question, names the messages that hold a slot, and none once they are done", async () => {
    const id = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-held'), limit: 'slot' });
    const pid = await L.scriptPid('slot-held');
    try {
      expect(await L.mgr.q('w1', 'limit_held')).toEqual(['ok', [id]]);
    } finally {
      killGroup(pid);
      await L.finish('w1', id);
    }
    expect(await L.mgr.q('w1', 'limit_held')).toEqual(['ok', []]);
  });

  it('running lists the key a run holds a slot of (§B1.8: {…, attempt, limit?})', async () => {
    const id = await L.send('w1', { param1: 'forever', param2: L.pidFile('slot-running'), limit: 'slot' });
    const pid = await L.scriptPid('slot-running');
    try {
      const running = (await L.mgr.q('w1', 'running'))[1] as { msg_id: string; limit?: string }[];
      expect(running.find((r) => r.msg_id === id)).toMatchObject({ msg_id: id, limit: 'slot' });
    } finally {
      killGroup(pid);
      await L.finish('w1', id);
    }
  });
});
