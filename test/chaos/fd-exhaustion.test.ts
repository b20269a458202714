// File-descriptor exhaustion (issue 20 item 3): a queue process at its fd limit strands no message in run/ and keeps answering.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../helpers/rq-root.js';
import { perTestRoot } from '../helpers/per-test-root.js';

const BIG = process.env.RQ_CHAOS_BIG === '1';
const MESSAGES = BIG ? 3000 : 300;
const NOFILE = Number(process.env.RQ_CHAOS_NOFILE ?? 256);
const WORKERS = 64;

function hasPrlimit(): boolean {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

// prlimit execs node itself (the pid stays the queue's); without it, a shell lowers the limit and execs.
const WRAP = hasPrlimit() ? ['prlimit', `--nofile=${NOFILE}:${NOFILE}`, '--'] : ['/bin/sh', '-c', `ulimit -n ${NOFILE} && exec "$@"`, 'rq-queue'];

const ctx = perTestRoot();

describe('fd exhaustion', () => {
  it(`ulimit -n ${NOFILE}, ${WORKERS} workers, ${MESSAGES} messages whose script holds fds: all done, none left in run/, ping answered`, async () => {
    const script = path.join(ctx.t.root, 'holds-fds');
    // Opens a few fds of its own and sleeps a little, so many scripts overlap.
    await fs.writeFile(script, '#!/bin/sh\nexec 5</dev/null 6</dev/null 7</dev/null\nsleep 0.2\necho "done ok" >&3\n', { mode: 0o755 });
    await addQueue(ctx.t.root, 'fds', { script, num_workers: WORKERS });
    const q = (ctx.q = await QueueProc.start(ctx.t.root, 'fds', { wrap: WRAP }));
    const limits = await fs.readFile(`/proc/${q.pid}/limits`, 'utf8');
    expect(limits).toMatch(new RegExp(`Max open files\\s+${NOFILE}\\s+${NOFILE}`));
    // Queued while paused, so the fds run out during dispatch, not during the creates.
    await fs.writeFile(q.paths.pauseFile, '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'PAUSE', 'PAUSE');
    for (let i = 0; i < MESSAGES; i += 50) await Promise.all(Array.from({ length: Math.min(50, MESSAGES - i) }, (_, j) => q.send({ param1: String(i + j) })));
    await fs.rm(q.paths.pauseFile);
    const counts = await waitFor(async () => {
      const n = await q.cmd('num_messages');
      return n.done + n.err === MESSAGES && n.que === 0 && n.run === 0 ? n : null;
    }, 'every message finished', 300_000, 200);
    expect(counts.err).toBe(0);
    expect(await fs.readdir(q.paths.state.run)).toEqual([]);
    expect(await q.cmd('ping')).toEqual(['pong']);
  }, 400_000);
});
