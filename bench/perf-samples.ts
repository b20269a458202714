// CPU samples of one process taken by perf (the kernel's sampler, every thread, kernel included), charged to threads, system calls and JavaScript functions.
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { round } from './lib.js';

/** Samples a second of CPU time (task-clock: time, on any machine, with or without hardware counters). */
export const HZ = Number(process.env.BENCH_HZ ?? 4000);

/** Throws, saying why, unless perf can sample this machine's kernel as well as the processes. */
export function requirePerf(bench: string): void {
  if (spawnSync('perf', ['--version']).status !== 0) throw new Error(`${bench} needs perf (Debian: apt-get install linux-perf)`);
  const paranoid = Number(fs.readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
  if (process.getuid?.() !== 0 && paranoid > 1) {
    throw new Error(`${bench} needs root, or kernel.perf_event_paranoid at 1 or below (it is ${paranoid}): perf would see no kernel time`);
  }
}

/** Node's flags for named JavaScript frames; --perf-basic-prof also starts V8's log, kept in `dir`, not the cwd. */
export const perfNodeFlags = (dir: string, who: string) => ['--perf-basic-prof', `--logfile=${path.join(dir, `${who}-v8.log`)}`, '--no-logfile-per-isolate'];

/** A wrap for QueueProc.start (liveQueue's `wrap`) that starts the queue's node with perfNodeFlags, by exec so the pid stays the queue's. */
export const perfQueueWrap = (dir: string) => ['sh', '-c', 'a=$1 b=$2 c=$3 n=$4; shift 4; exec "$n" "$a" "$b" "$c" "$@"', 'sh', ...perfNodeFlags(dir, 'queue')];

/** Writes `command` to perf's control fd and waits for its ack; throws if perf ends first. */
async function control(perf: ReturnType<typeof spawn>, command: string): Promise<void> {
  if (perf.exitCode !== null || perf.signalCode !== null) throw new Error(`perf ended (${perf.exitCode ?? perf.signalCode}) before ${command}`);
  const ack = perf.stdio[4] as Readable;
  await new Promise<void>((resolve, reject) => {
    const onData = (b: Buffer) => {
      if (!b.toString().includes('ack')) return;
      done();
      resolve();
    };
    const onExit = (code: number | null) => {
      done();
      reject(new Error(`perf ended (${code}) before acknowledging ${command}`));
    };
    const done = () => {
      ack.off('data', onData);
      perf.off('exit', onExit);
    };
    ack.on('data', onData);
    perf.once('exit', onExit);
    (perf.stdio[3] as Writable).write(`${command}\n`);
  });
}

/**
 * Runs `work` with `pid` sampled: perf starts disabled and is enabled and disabled through its control
 * fds (each acknowledged), so only the work is seen. Returns `perf script`'s text: per sample its thread
 * id, then its frames, leaf first. No build-id cache: nothing is copied into ~/.debug. With `children: false`
 * the processes `pid` starts (a queue's scripts) are not sampled, only its own threads.
 */
export async function profiled(pid: number, dir: string, work: () => Promise<void>, opts: { children?: boolean } = {}): Promise<string> {
  const out = path.join(dir, 'perf.data');
  const args = ['record', '-q', '-N', '-B', '-e', 'task-clock', '-F', String(HZ), '-g', '-D', '-1', '--control', 'fd:3,4', '-o', out, '-p', String(pid)];
  if (opts.children === false) args.push('--no-inherit');
  const perf = spawn('perf', args, { stdio: ['ignore', 'ignore', 'inherit', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => perf.once('exit', resolve));
  try {
    await control(perf, 'enable');
    await work();
    await control(perf, 'disable');
  } finally {
    perf.kill('SIGINT');
    await exited;
  }
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', out, '-F', 'tid,ip,sym,dso'], { maxBuffer: 1 << 30 });
  return stdout;
}

/** The kernel's entry of a system call: the frame on its leaf side names the call (some calls skip their `__x64_sys_` frame). */
const SYSCALL_ENTRY = /\s(?:x64_sys_call|do_syscall_64|invoke_syscall)\s/;
const SYSCALL_NAMED = /\s__(?:x64|arm64)_sys_(\w+)\s/;
const SYSCALL_PREFIX = /^(?:__se_sys_|__do_sys_|ksys_|do_sys_)/;
const SYSCALL_RETURN = /^(?:exit_to_user_mode|syscall_exit|arch_do_signal|schedule|irqentry)/;
const GC =
  /v8::internal::(?:Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkSweep|ConcurrentMarking|IncrementalMarking|Sweeper|ArrayBufferSweeper|GCTracer)|Heap::(?:CollectGarbage|PerformGarbageCollection)/;
/** V8's compilers and its JavaScript parser (not JSON.parse's JsonParser, which is the program's work). */
const COMPILE = /v8::internal::(?:compiler::|maglev::|baseline::|Compiler::|Parser\b|PreParser\b|ParserBase\b)/;

/** A frame's symbol: `ffffffff81234 ksys_write ([kernel.kallsyms])` → `ksys_write`. */
const symbolOf = (frame: string) => frame.split(/\s+/)[1] ?? '';

/** The category of one sample from its frames (leaf first): the system call it is in, or what ran. */
export function category(frames: string[]): string {
  const entry = frames.findIndex((f) => SYSCALL_ENTRY.test(` ${f} `));
  if (entry > 0) {
    const named = frames.slice(0, entry).find((f) => SYSCALL_NAMED.test(` ${f} `));
    if (named) return `sys_${SYSCALL_NAMED.exec(` ${named} `)![1]}`;
    const inner = symbolOf(frames[entry - 1]);
    // On the way back from a call (a signal, a reschedule): the kernel's, not the call's.
    if (SYSCALL_RETURN.test(inner)) return 'kernel_other';
    return `sys_${inner.replace(SYSCALL_PREFIX, '')}`;
  }
  if (frames[0]?.includes('[kernel.kallsyms]')) return 'kernel_other';
  if (frames.some((f) => GC.test(f))) return 'gc';
  if (frames.some((f) => COMPILE.test(f))) return 'compile';
  return 'user';
}

/** `JS:*create file:///…/queue-main.js:11922:15 (/tmp/perf-<pid>.map)` → `create queue-main.js:11922` (name or anonymous, file, line). */
function jsFrame(frame: string): string | null {
  const js = /JS:[*~^+]?(\S*) (?:file:\/\/)?(?:\S*\/)?([^/\s]+?:\d+|[^/\s:]+)/.exec(frame);
  return js ? `${js[1] || '(anonymous)'} ${js[2]}` : null;
}

type Tally = Map<string, number>;
const add = (t: Tally, k: string) => t.set(k, (t.get(k) ?? 0) + 1);

/** Samples of one process summed over blocks, the main thread apart. */
export class SampleTally {
  private readonly main: Tally = new Map();
  private readonly others: Tally = new Map();
  /** Main-thread samples under each JavaScript function (a sample counts once for each function on its stack). */
  private readonly jsUnder: Tally = new Map();
  /** Main-thread samples whose innermost JavaScript function is this one (its own code and the native calls it made). */
  private readonly jsInnermost: Tally = new Map();

  /** Adds a `profiled` text; samples of thread `mainTid` (the process's pid) are the main thread's. */
  add(script: string, mainTid: number): void {
    let tid = -1;
    let frames: string[] = [];
    const flush = () => {
      if (tid < 0) return;
      add(tid === mainTid ? this.main : this.others, category(frames));
      if (tid !== mainTid) return;
      const js = frames.map(jsFrame).filter((f): f is string => f !== null);
      if (js.length) add(this.jsInnermost, js[0]);
      for (const f of new Set(js)) add(this.jsUnder, f);
    };
    for (const line of script.split('\n')) {
      const head = /^\s*(\d+)\s*$/.exec(line);
      if (head) {
        flush();
        tid = Number(head[1]);
        frames = [];
      } else if (line.trim()) frames.push(line.trim());
    }
    flush();
  }

  /** µs of CPU per `units` (creates, messages): by category for both, and the main thread's top JavaScript functions. */
  report(units: number, top = 15) {
    return {
      main_thread_us: byCategory(this.main, units),
      other_threads_us: byCategory(this.others, units),
      main_thread_js_innermost_us: largest(this.jsInnermost, units, top),
      main_thread_js_under_us: largest(this.jsUnder, units, top),
    };
  }
}

const usOf = (samples: number, units: number) => round((samples / HZ / units) * 1e6, 1);

/** `total`, then each category of 0.5 µs or more, largest first, the others summed as `rest`. */
function byCategory(t: Tally, units: number): Record<string, number> {
  const all = [...t.entries()].sort((a, b) => b[1] - a[1]);
  const out: Record<string, number> = {
    total: usOf(
      all.reduce((s, [, n]) => s + n, 0),
      units,
    ),
  };
  let rest = 0;
  for (const [k, n] of all) {
    if (usOf(n, units) >= 0.5) out[k] = usOf(n, units);
    else rest += n;
  }
  if (rest) out.rest = usOf(rest, units);
  return out;
}

const largest = (t: Tally, units: number, top: number) =>
  Object.fromEntries(
    [...t.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, n]) => [k, usOf(n, units)]),
  );
