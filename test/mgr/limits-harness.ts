// What the limits tests share: a root's rq-mgr and the socket calls made through it (send, finish, limit_status, history), limits.json written in place, a script's group killed, the sampler's verdict.
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { SETTLE_MAX_MS } from '../../src/mgr/limits-service.js';
import type { SampleReport } from '../helpers/limit-sampler.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { pidInFile } from '../helpers/process-groups.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import type { LimitKeyStatus } from '../../src/ipc/mgr-client.js';

export interface HistoryEntry {
  at: string;
  from?: string;
  to?: string;
  event?: string;
  [k: string]: unknown;
}

/** One root's rq-mgr and the socket calls the tests make through it; `groups` (killLeftoverGroups': the process groups of
 * `forever` scripts a failing test could leave behind) gets each script's group. */
export class Limits {
  constructor(
    readonly root: string,
    public mgr: MgrProc,
    private readonly groups: number[],
  ) {}

  async send(queue: string, fields: Record<string, unknown>): Promise<string> {
    const r = await this.mgr.q(queue, 'create_message', { dest: queue, ...fields });
    if (r[0] !== 'ok') throw new Error(`create_message on ${queue} failed: ${JSON.stringify(r)}`);
    return String(r[1]).split('/').pop()!;
  }

  /** Waits (on the queue's wait_message) until the message is finished; its state and status text. */
  async finish(queue: string, id: string, timeoutMs = 20_000): Promise<{ state: string; status: string }> {
    return waitFor(
      async () => {
        const r = await this.mgr.q(queue, 'wait_message', { msg_id: id, timeout: 5 });
        return r[0] === 'ok' ? r[1] : false;
      },
      `${queue}/${id} to finish`,
      timeoutMs,
    );
  }

  async status(key: string): Promise<LimitKeyStatus | undefined> {
    const r = await this.mgr.cmd('limit_status', JSON.stringify({ key }));
    expect(r[0]).toBe('ok');
    return r[1][key];
  }

  /** Waits for the key's table entry to satisfy `ok` (undefined: the key is forgotten, nothing held or waiting). */
  async statusWhen(
    key: string,
    ok: (s: LimitKeyStatus | undefined) => boolean,
    label: string,
    timeoutMs = 10_000,
    everyMs = 20,
  ): Promise<LimitKeyStatus | undefined> {
    let last: LimitKeyStatus | undefined;
    try {
      await waitFor(async () => ok((last = await this.status(key))), label, timeoutMs, everyMs);
    } catch (err) {
      throw new Error(`${(err as Error).message} (last limit_status of ${key}: ${JSON.stringify(last)})`, { cause: err });
    }
    return last;
  }

  /** Waits until the key's waiting line is exactly `refs`, in that order. */
  async line(key: string, refs: string[], label = `the line of ${key}`): Promise<LimitKeyStatus | undefined> {
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
    this.groups.push(pid);
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
    // Settling ends once every queue has reported, at the latest at rq-mgr's own ceiling.
    await this.statusWhen(probe.key, (s) => s?.holders.length === 1, 'rq-mgr to settle', SETTLE_MAX_MS + 5000);
    expect(await this.mgr.cmd('limit_release', JSON.stringify(probe))).toEqual(['ok']);
  }
}

/** Kills a script's whole process group (what a crash of it would look like to rq). */
export function killGroup(pgid: number): void {
  process.kill(-pgid, 'SIGKILL');
}

export async function writeLimits(root: string, table: Record<string, unknown> | string): Promise<void> {
  const file = rootPaths(root).limitsFile;
  // Written aside and renamed in, so rq-mgr's watch never reads half a file.
  await fs.writeFile(`${file}.tmp`, typeof table === 'string' ? table : JSON.stringify(table));
  await fs.rename(`${file}.tmp`, file);
}

/** The finished message's job/stdio.log (done/ is hashed by date). */
export async function stdioOf(root: string, queue: string, id: string): Promise<string> {
  const done = queuePaths(root, queue).state.done;
  const rel = (await fs.readdir(done, { recursive: true })).find((p) => p.endsWith(path.join(id, 'job', 'stdio.log')));
  if (!rel) throw new Error(`no stdio.log of ${queue}/${id} under ${done}`);
  return fs.readFile(path.join(done, rel), 'utf8');
}

export function expectNoOverlap(report: SampleReport, allowed: number, note = ''): void {
  expect(report.over, `more than ${allowed} scripts held the key at once ${note}`).toEqual([]);
  expect(report.samples).toBeGreaterThan(0);
}

export const SHARED_LIMITS = { reports: 2, 'api:*': 1, fifo: 1, pz: 1, pg: 1, grow: 1 };

/** The queues of the root the "several queues sharing keys" tests share, by name: workers, and t2's default limit (a template). */
const SHARED_QUEUES: Record<string, { num_workers: number; extra?: Record<string, unknown> }> = {
  r1: { num_workers: 3 },
  r2: { num_workers: 3 },
  r3: { num_workers: 3 },
  f1: { num_workers: 2 },
  f2: { num_workers: 2 },
  f3: { num_workers: 2 },
  t1: { num_workers: 4 },
  t2: { num_workers: 1, extra: { limit: 'api:{queue}-{param1}' } },
  pa: { num_workers: 2 },
  pb: { num_workers: 3 },
  pc: { num_workers: 1 },
  g1: { num_workers: 5 },
};

/** How long startShared may take: rq-mgr's start (a first ping may take 30 s on a loaded machine), then its settling, at most SETTLE_MAX_MS. */
export const START_SHARED_MS = 30_000 + SETTLE_MAX_MS + 15_000;

/** A root with SHARED_LIMITS and the named queues of SHARED_QUEUES under a settled rq-mgr. */
export async function startShared(queues: string[], groups: number[]): Promise<{ t: TestRoot; L: Limits }> {
  const t = await makeRoot();
  await fs.mkdir(path.join(t.root, 'pids'));
  await writeLimits(t.root, SHARED_LIMITS);
  for (const q of queues) await addQueue(t.root, q, SHARED_QUEUES[q]);
  const mgr = await MgrProc.start(t.root);
  const L = new Limits(t.root, mgr, groups);
  for (const q of queues) await mgr.waitQueueUp(q);
  await L.settled();
  return { t, L };
}
