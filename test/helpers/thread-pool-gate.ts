// Holds libuv's thread pool so a test can act between two of a module's file operations: the real race, made to land every time.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How many threads fs calls share (libuv's default is 4). */
export const POOL_SIZE = Number(process.env.UV_THREADPOOL_SIZE) || 4;

/** Threads of this process blocked reading a pipe: the pool threads a gate holds. */
function heldThreads(): number {
  let n = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      if (fs.readFileSync(`/proc/self/task/${t}/wchan`, 'utf8').includes('pipe_read')) n++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return n;
}

/**
 * Each hold is a read of a FIFO (opened O_RDWR, so nothing blocks at open) queued on the pool: it
 * keeps one thread until released, and jobs queued after it wait their turn in order.
 */
export class ThreadPoolGate {
  private readonly holds: { fd: number; done: Promise<void> }[] = [];

  private readonly dir: string;

  constructor(parent: string) {
    this.dir = fs.mkdtempSync(path.join(parent, 'gate-'));
  }

  hold(): number {
    const fifo = path.join(this.dir, String(this.holds.length));
    execFileSync('mkfifo', [fifo]);
    const fd = fs.openSync(fifo, fs.constants.O_RDWR);
    const done = new Promise<void>((resolve) => fs.read(fd, Buffer.alloc(1), 0, 1, null, () => resolve()));
    this.holds.push({ fd, done });
    return this.holds.length - 1;
  }

  /** Frees hold `i`'s thread; resolves once its read has come back to the loop. */
  async release(i: number): Promise<void> {
    fs.writeSync(this.holds[i].fd, 'x');
    await this.holds[i].done;
  }

  /** Waits until `n` pool threads sit in a held read. */
  async held(n: number): Promise<void> {
    for (let i = 0; heldThreads() !== n; i++) {
      if (i > 2000) throw new Error(`expected ${n} held pool threads, saw ${heldThreads()}`);
      await sleep(5);
    }
  }

  async releaseAll(): Promise<void> {
    for (const h of this.holds) fs.writeSync(h.fd, 'x');
    await Promise.all(this.holds.map((h) => h.done));
    for (const h of this.holds) fs.closeSync(h.fd);
    this.holds.length = 0;
  }
}

/**
 * Runs `op` (whose first fs call is `first`'s pool job) so that `between` runs after that first job
 * is done and before the second is picked up: the pool is held whole, `op` queues its first job with
 * a hold behind it, one thread is let go (it runs the first job, then takes the hold behind it), and
 * once the second job is queued `between` runs and a thread is let go for it. `between` must be
 * synchronous (fs.*Sync): every pool thread is held while it runs.
 */
export async function betweenTwoCalls<T>(gateDir: string, op: () => Promise<T>, between: () => void): Promise<T> {
  const gate = new ThreadPoolGate(gateDir);
  try {
    for (let i = 0; i < POOL_SIZE; i++) gate.hold();
    await gate.held(POOL_SIZE);
    const result = op().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    gate.hold(); // behind the first job
    await gate.release(0);
    await gate.held(POOL_SIZE); // the freed thread ran the first job and now sits in `behind`
    await sleep(30); // the first job's answer reaches the loop, which queues the second job
    between();
    await gate.release(1);
    const r = await result;
    if ('error' in r) throw r.error;
    return r.value;
  } finally {
    await gate.releaseAll();
  }
}

/**
 * Runs `op` with every fd number below the lowest free one in use and RLIMIT_NOFILE lowered to it,
 * so the next open fails with EMFILE; the limit is put back after (spare fds are closed first so
 * that prlimit can be run again).
 */
export async function withNoFreeFd<T>(op: () => Promise<T>): Promise<T> {
  const spares = Array.from({ length: 16 }, () => fs.openSync('/dev/null', 'r'));
  const probe = fs.openSync('/dev/null', 'r');
  fs.closeSync(probe);
  const [soft, hard] = execFileSync('prlimit', ['--pid', String(process.pid), '--nofile', '--noheadings', '--raw', '--output', 'SOFT,HARD'], {
    encoding: 'utf8',
  })
    .trim()
    .split(/\s+/);
  execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${probe}:${hard}`]);
  try {
    return await op();
  } finally {
    for (const fd of spares) fs.closeSync(fd);
    execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${soft}:${hard}`]);
  }
}
