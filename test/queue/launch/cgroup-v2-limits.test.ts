// Run limits and accounting through cgroup v2: each run's CPU time from its own cgroup against the kernel's rusage, and the limit and event files as the kernel writes them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ownCgroupHome } from '../../../src/queue/launch/cgroup-fs.js';
import { V2Limits, ioBytes, readV2Usage } from '../../../src/queue/launch/cgroup-v2-limits.js';
import { LIMITS_PY } from './limit-queues.js';

const M = 1024 * 1024;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

describe('a run cgroup v2 on this host', () => {
  it("accounts a run's CPU time as the kernel's rusage of its processes does, within 10 %", async () => {
    const home = ownCgroupHome();
    if (!home.ok) throw new Error(`this test needs a writable cgroup2: ${home.why}`);
    const dir = path.join(home.dir, `rq-test-acct-${process.pid}`);
    fs.mkdirSync(dir);
    cleanups.push(() => fs.rmdirSync(dir));
    // The shell joins the cgroup and becomes the fixture's wrapper, which reaps a worker that burns CPU and prints the kernel's rusage of both.
    const child = spawn('sh', ['-c', `echo $$ > ${dir}/cgroup.procs && exec python3 ${LIMITS_PY}`], {
      stdio: ['ignore', 'pipe', 'inherit', 'pipe'],
      env: { ...process.env, RQ_PARAM1: 'account', RQ_PARAM2: '50', RQ_WRITE: '3' },
    });
    (child.stdio[3] as Readable).resume();
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    await once(child, 'exit');
    const own = JSON.parse(out.split('\n').find((l) => l.startsWith('{'))!) as { cpu_ms: number };
    expect(own.cpu_ms).toBeGreaterThanOrEqual(300);
    const { usage, oom } = readV2Usage(dir, {});
    // As on the v1 hierarchies (run-limits.test.ts): the cgroup also counts the shell before its exec and the wrapper's exit.
    expect(Math.abs(usage.cpu_user_ms! + usage.cpu_system_ms! - own.cpu_ms)).toBeLessThanOrEqual(own.cpu_ms * 0.1 + 10);
    expect(oom).toBeNull();
  });
});

/**
 * No host rq is tested on gives memory, pids, cpu or io to cgroup v2 (they are bound to v1
 * hierarchies there), so these files are laid out as the kernel's cgroup-v2 documentation writes
 * them, in a plain directory: what rq writes into them and reads from them.
 */
describe('the cgroup v2 files of limits and accounting', () => {
  function tree(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-v2-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
      fs.writeFileSync(path.join(dir, f), text);
    }
    return dir;
  }
  const delegated = { 'cgroup.controllers': 'cpuset cpu io memory pids\n', 'cgroup.subtree_control': 'cpu io memory pids\n' };
  const queueFiles = {
    'q/cgroup.controllers': 'cpu io memory pids\n',
    'q/cgroup.subtree_control': 'cpu io memory pids\n',
    'q/cpu.weight.nice': '',
    'p/cpu.weight.nice': '',
  };
  const open = (home: string, scheduler: string) => V2Limits.open(home, path.join(home, 'p'), path.join(home, 'q'), scheduler);
  const runFiles = ['memory.max', 'memory.swap.max', 'memory.high', 'cpu.max', 'pids.max', 'io.bfq.weight'];

  it('writes each limit into the run cgroup in the kernel units: bytes, a quota over a period, a count, a weight; swap is held at 0', () => {
    const home = tree({ ...delegated, ...queueFiles, ...Object.fromEntries(runFiles.map((f) => [`q/run/${f}`, ''])) });
    const limits = open(home, 'bfq');
    expect(limits.usable).toBe(true);
    // The queue's cgroups weigh as nice 19 against the daemons', as its scripts did when nice alone weighed.
    for (const parent of ['p', 'q']) expect(fs.readFileSync(path.join(home, parent, 'cpu.weight.nice'), 'utf8')).toBe('19');
    limits.apply(path.join(home, 'q', 'run'), { memory_max: 64 * M, memory_high: 48 * M, cpu_max: 0.2, pids_max: 32, io_weight: 5000 });
    const read = (f: string) => fs.readFileSync(path.join(home, 'q', 'run', f), 'utf8');
    expect(runFiles.map(read)).toEqual([String(64 * M), '0', String(48 * M), '20000 100000', '32', '1000']);
  });

  it('says why a limit cannot be enforced: a controller not offered, a disk bfq does not schedule; and what it can', () => {
    // Offered io but not given it, and not rq's to divide (a directory without cgroup.type reads as the root, never delegated): rq does not take it.
    const home = tree({ 'cgroup.controllers': 'cpu pids io\n', 'cgroup.subtree_control': 'cpu pids\n', ...queueFiles });
    const limits = open(home, 'mq-deadline');
    // Not offered at the root: held by a v1 hierarchy (as on this project's hosts), which no delegation would change.
    expect(limits.why('memory_max')).toBe(`cgroup v2 has no memory controller at ${home}: the kernel keeps it on a cgroup v1 hierarchy, or has none`);
    expect(limits.why('io_weight')).toBe(
      `${home} is not delegated to rq (systemd: Delegate=yes), and rq gives away no controller of a cgroup it was not given`,
    );
    expect(limits.why('cpu_max')).toBeNull();
    expect(limits.why('pids_max')).toBeNull();
    expect(limits.takes({ memory_max: 64 * M })).toBe(false);
    expect(limits.takes({ memory_max: 64 * M, pids_max: 8 })).toBe(true);
    expect(open(tree({ ...delegated, ...queueFiles }), 'mq-deadline').why('io_weight')).toBe(
      "the queue's disk is scheduled by mq-deadline, and only bfq weighs IO",
    );
  });

  it("reads a run's usage from its files, and an OOM kill at its own memory_max apart from one for memory beyond the run", () => {
    const files = {
      'cpu.stat': 'usage_usec 1500000\nuser_usec 1200000\nsystem_usec 300000\nnr_periods 50\nnr_throttled 40\nthrottled_usec 3500000\n',
      'memory.peak': `${64 * M}\n`,
      'memory.events': 'low 0\nhigh 7\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n',
      'pids.peak': '32\n',
      'pids.events': 'max 5\n',
      'io.stat': '8:0 rbytes=4096 wbytes=1048576 rios=1 wios=256 dbytes=0 dios=0\n259:0 rbytes=8192 wbytes=0 rios=2 wios=0 dbytes=0 dios=0\n',
    };
    const dir = tree(files);
    const limits = { memory_max: 64 * M, memory_high: 48 * M, cpu_max: 0.2, pids_max: 32 };
    expect(readV2Usage(dir, limits)).toEqual({
      usage: {
        cpu_user_ms: 1200,
        cpu_system_ms: 300,
        throttled_ms: 3500,
        memory_peak_bytes: 64 * M,
        pids_peak: 32,
        pids_refused: 5,
        io_read_bytes: 12288,
        io_write_bytes: M,
        memory_high_holds: 7,
        oom_kills: 1,
      },
      oom: 'OOM - killed at memory_max 64M (peak 64M)',
    });
    // A global OOM: the run's own limit refused nothing (`oom` 0), though it had reached it (`max`) and reclaim had made room.
    fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 0\noom_kill 1\noom_group_kill 0\n');
    expect(readV2Usage(dir, { memory_max: 512 * M }).oom).toBe("OOM - killed by the kernel's OOM killer, short of memory beyond the run (peak 64M)");
    // Without limits a run is accounted all the same; throttling and holds only where it had limits for them.
    const plain = readV2Usage(dir, {}).usage;
    expect(plain).toMatchObject({ cpu_user_ms: 1200, memory_peak_bytes: 64 * M });
    expect(plain).not.toHaveProperty('throttled_ms');
    expect(plain).not.toHaveProperty('memory_high_holds');
  });

  it('io.stat with no device line says nothing of IO', () => {
    expect(ioBytes('')).toBeUndefined();
    expect(ioBytes(null)).toBeUndefined();
  });
});
