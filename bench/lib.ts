// Shared bench pieces: the raw spawn and filesystem floors, a live queue in a temp root, waiting for counts, /proc readings.
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { QueueProc, addQueue, makeRoot, type QueueDef, type TestRoot } from '../test/helpers/rq-root.js';
import { QueueClient } from '../src/ipc/queue-client.js';
import { queueCommand } from '../src/ipc/rq1.js';
import { SocketConnection } from '../src/ipc/socket-client.js';

/** A C floor program from bench/fixtures/<name>.c built into `dir`, or why there is none (no C compiler is a missing baseline, not an error). */
export async function buildC(name: string, dir: string): Promise<{ bin: string } | { missing: string }> {
  const bin = path.join(dir, name);
  const source = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', `${name}.c`);
  try {
    await promisify(execFile)('cc', ['-O2', '-o', bin, source]);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { missing: 'no C compiler (cc) on this machine; floor skipped' };
    throw err;
  }
  return { bin };
}

export const DONE_SCRIPT = '#!/bin/bash\necho "done ok" >&3\n';

export async function writeScript(dir: string, body: string): Promise<string> {
  const file = path.join(dir, 'bench-run.sh');
  await fs.writeFile(file, body, { mode: 0o755 });
  return file;
}

/** How fast a bare Node process spawns and reaps `script` one after another, with fds 3/4 like rq. */
export async function spawnFloor(script: string, n: number, cwd: string): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await new Promise<void>((resolve, reject) => {
      const c = spawn(script, [], { cwd, stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true });
      c.stdio[3]!.on('data', () => undefined);
      c.on('error', reject);
      c.on('close', () => resolve());
    });
  }
  return n / ((performance.now() - t0) / 1000);
}

/**
 * The least a create could do on the same disk, as one op: mkdir a temp dir under `dir`, write `body` as its
 * msg file (fsynced only with `sync`), rename the dir into que/. Ops may run concurrently.
 */
export async function fsFloor(dir: string, body: Buffer, sync: boolean): Promise<() => Promise<void>> {
  const prep = path.join(dir, 'prep');
  const que = path.join(dir, 'que');
  await fs.mkdir(prep, { recursive: true });
  await fs.mkdir(que, { recursive: true });
  let seq = 0;
  return async () => {
    const n = seq++;
    const tmp = path.join(prep, `_${n}`);
    await fs.mkdir(tmp);
    const fh = await fs.open(path.join(tmp, 'msg'), 'wx', 0o644);
    try {
      await fh.writeFile(body);
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, path.join(que, String(n)));
  };
}

/**
 * The least a durable create could do: the no-fsync `fsFloor` op, then a record appended to one journal file
 * whose appends share one fdatasync per batch (group commit: a batch is what arrived while the last sync ran).
 * No durable enqueue at the same concurrency can beat it on the same disk.
 */
export async function durableFloor(dir: string, body: Buffer, recordBytes = 300): Promise<() => Promise<void>> {
  const op = await fsFloor(dir, body, false);
  const journal = await fs.open(path.join(dir, 'journal'), 'a');
  const record = Buffer.alloc(recordBytes, 'j');
  let waiting: (() => void)[] = [];
  let syncing: Promise<void> | null = null;
  const flush = async () => {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      await journal.write(Buffer.concat(batch.map(() => record)));
      await journal.datasync();
      for (const done of batch) done();
    }
    syncing = null;
  };
  return async () => {
    await op();
    await new Promise<void>((resolve) => {
      waiting.push(resolve);
      syncing ??= flush();
    });
  };
}

/** A typed client on one long-lived connection to a queue socket, as the web process and the timers hold theirs. */
export async function connectedClient(sock: string, timeoutMs = 30_000): Promise<{ client: QueueClient; close(): void }> {
  const conn = await SocketConnection.open(sock, 'rq1', { timeoutMs });
  const client = new QueueClient(async (command, arg) => JSON.parse(await conn.request(`${command} ${JSON.stringify(arg ?? {})}`)));
  return { client, close: () => conn.close() };
}

export interface LiveQueue {
  t: TestRoot;
  q: QueueProc;
  pauseFile: string;
  close(): Promise<void>;
}

export async function liveQueue(name: string, def: QueueDef, wrap?: string[]): Promise<LiveQueue> {
  const t = await makeRoot();
  await addQueue(t.root, name, def);
  const q = await QueueProc.start(t.root, name, { wrap });
  return {
    t,
    q,
    pauseFile: path.join(t.root, 'config', `${name}.pause`),
    async close() {
      await q.stop();
      await t.cleanup();
    },
  };
}

/**
 * Drains `n` messages preloaded in a paused queue made from `def`: its rate, and the queue process's CPU per message.
 * With `warm`, the same queue process first drains that many, untimed: a queue that has been running, its JIT's
 * compiles of the create and run paths done, where a fresh one runs them unoptimised for its first thousands.
 */
export async function drainRate(name: string, def: QueueDef, n: number, warm = 0): Promise<{ perS: number; cpuMsPerMsg: number }> {
  const lq = await liveQueue(name, def);
  try {
    await fs.writeFile(lq.pauseFile, '');
    if (warm > 0) {
      const warmIds = await enqueue(lq.q, warm, 16);
      await fs.rm(lq.pauseFile);
      await waitDrained(lq.q, warmIds);
      // Every create reads the pause file first: none of the messages below starts before its removal.
      await fs.writeFile(lq.pauseFile, '');
    }
    const ids = await enqueue(lq.q, n, 16);
    const pid = lq.q.child.pid!;
    const cpu0 = await cpuMs(pid);
    const t0 = performance.now();
    await fs.rm(lq.pauseFile);
    const t1 = await waitDrained(lq.q, ids, warm);
    const cpu1 = await cpuMs(pid);
    return { perS: n / ((t1 - t0) / 1000), cpuMsPerMsg: (cpu1 - cpu0) / n };
  } finally {
    await lq.close();
  }
}

/** CPU time a process has spent in user space so far (its JavaScript, V8's compilers), in ms, from /proc. */
export async function userCpuMs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[11]) * (1000 / CLOCK_TICKS);
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux clock ticks of 10 ms); with `mainThread`, its main thread's alone. */
export async function cpuMs(pid: number, mainThread = false): Promise<number> {
  const stat = await fs.readFile(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat(5), i.e. 11 and 12 after the command name.
  return (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS);
}

/** Resident set size of a process in MB (VmRSS of /proc/<pid>/status; RssAnon or RssFile for its parts). */
export async function rssMb(pid: number, field: 'VmRSS' | 'RssAnon' | 'RssFile' = 'VmRSS'): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  if (!kb) throw new Error(`no ${field} for pid ${pid}`);
  return kb / 1024;
}

/** The kB fields of /proc/<pid>/smaps_rollup: the process's memory summed over its mappings. */
async function smapsRollup(pid: number, fields: readonly string[]): Promise<number[]> {
  const rollup = await fs.readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
  return fields.map((field) => {
    const kb = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
    if (!Number.isFinite(kb)) throw new Error(`no ${field} line in /proc/${pid}/smaps_rollup`);
    return kb;
  });
}

/**
 * Memory only this process holds, in MB (Private_Clean + Private_Dirty of /proc/<pid>/smaps_rollup): what one
 * more such process costs the host. VmRSS also counts pages it shares, the node binary's above all, paid once.
 */
export async function privateMb(pid: number): Promise<number> {
  const [clean, dirty] = await smapsRollup(pid, ['Private_Clean', 'Private_Dirty']);
  return (clean + dirty) / 1024;
}

/**
 * Proportional set size in MB (Pss of /proc/<pid>/smaps_rollup): private pages plus each shared page divided
 * by the number of processes mapping it. It depends on what else runs: the node binary's text is split
 * among every node process on the host, so a queue's PSS falls as more queues (or other node processes) start.
 */
export async function pssMb(pid: number): Promise<number> {
  const [pss] = await smapsRollup(pid, ['Pss']);
  return pss / 1024;
}

export async function loadavg(): Promise<string> {
  return (await fs.readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
}

/** Wall-clock ms with µs resolution, comparable with a script's $EPOCHREALTIME. */
export const nowMs = () => performance.timeOrigin + performance.now();

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Polls num_messages (cheap, in-memory counters) until `pred` holds; returns the time it held. */
export async function waitCounts(q: Pick<QueueProc, 'cmd'>, pred: (n: Record<string, number>) => boolean, everyMs = 5, timeoutMs = 600_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = await q.cmd('num_messages');
    if (pred(n)) return performance.now();
    if (Date.now() > deadline) throw new Error(`timed out; last counts ${JSON.stringify(n)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs `op` `count` times with `concurrency` in flight, each lane (0, 1, …) one op at a time; resolves when all are done. */
export async function runLanes(count: number, concurrency: number, op: (lane: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (_: unknown, i: number) => {
    while (next < count) {
      next++;
      await op(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
}

/** Runs `op` with `concurrency` in flight for `seconds`; returns completed ops and elapsed seconds. */
export async function slice(op: () => Promise<void>, concurrency: number, seconds: number): Promise<{ ops: number; s: number }> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let ops = 0;
  const lane = async () => {
    while (performance.now() < end) {
      await op();
      ops++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { ops, s: (performance.now() - start) / 1000 };
}

/** Sends `count` create_message requests with `concurrency` in flight; returns the ids made, in no particular order. */
export async function enqueue(q: Pick<QueueProc, 'cmd' | 'name'>, count: number, concurrency: number, fields: Record<string, unknown> = {}): Promise<string[]> {
  const ids: string[] = [];
  await runLanes(count, concurrency, async () => {
    const r = await q.cmd('create_message', { dest: q.name, ...fields });
    if (r[0] !== 'ok') throw new Error(JSON.stringify(r));
    ids.push(String(r[1]).split('/').pop()!);
  });
  return ids;
}

/**
 * When a drain of `ids` (made in order, no priorities) has finished every one of them: the queue's
 * own wait_message on the last made, which starts last, then the counts for any still running
 * beside it. Polling the counts all along would cost the queue a request every few ms, a share of
 * the rate it measures.
 */
export async function waitDrained(q: QueueProc, ids: string[], doneBefore = 0): Promise<number> {
  const last = ids.reduce((a, b) => (b > a ? b : a));
  const r = (await queueCommand(q.paths.sock, 'wait_message', { msg_id: last, timeout: 600 }, { timeoutMs: 610_000 })) as unknown[];
  if (r[0] !== 'ok') throw new Error(`wait_message ${last}: ${JSON.stringify(r)}`);
  return waitCounts(q, (n) => n.done === doneBefore + ids.length);
}

export const median = (xs: number[]) => quantile(xs, 0.5);
export function quantile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}
export const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
