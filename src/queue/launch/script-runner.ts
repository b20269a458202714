// Starts one queue script for one message: environment, fds 3/4, stdio.log, own process group (and run cgroup).
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import { execPrefixOf } from '../../config/queue-config.js';
import { LineSplitter, type SplitLine } from './line-splitter.js';
import { type OutputBounds, RunLog } from './run-log.js';
import { endLeftovers } from './leftovers.js';
import type { RunUsage } from './run-usage.js';
import type { RunLimits } from '../../message/run-limits.js';
import type { ScriptEnv } from './script-env.js';
import { type FromScript, streamFromScript } from './from-script.js';
import { type ToScript, streamToScript } from './to-script.js';

/** `dev` and `ino` say which file the path named at the start, for a run that fails as a deploy lands (start-refusal.ts). */
export type ResolvedScript = { ok: true; path: string; dev: number; ino: number } | { ok: false; reason: string };

/** Why a script's real path may not run for this queue (one made over HTTP: outside script_dirs), or null. */
export type ScriptCheck = (given: string, real: string) => string | null;

/**
 * realpath of the configured script (relative to root), so a deploy swapping a symlink spares running jobs. Synchronous: it is on the
 * dispatch path and costs three small syscalls (and, for a queue made over HTTP, `check`'s realpaths of script_dirs: it is held to them at every start).
 */
export function resolveScript(root: string, script: string, check?: ScriptCheck): ResolvedScript {
  const configured = path.resolve(root, script);
  let real: string;
  try {
    // libc's realpath(3): node's own walks the path in JS, an lstat per component, at every start.
    real = fs.realpathSync.native(configured);
  } catch {
    return { ok: false, reason: `script ${configured} does not exist` };
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
    if (!st.isFile()) return { ok: false, reason: `script ${real} is not a regular file` };
    fs.accessSync(real, fs.constants.X_OK);
  } catch {
    return { ok: false, reason: `script ${real} is not executable` };
  }
  const refused = check?.(script, real);
  if (refused) return { ok: false, reason: refused };
  return { ok: true, path: real, dev: st.dev, ino: st.ino };
}

/**
 * argv for a script: no prefix runs the script itself; a prefix (default `bash -lc `) is
 * split on whitespace and the script path appended as one argument. No shell string is built.
 */
export function execArgv(prefix: string | null | undefined, scriptPath: string): string[] {
  const words = execPrefixOf({ exec_prefix: prefix ?? null })
    .split(/\s+/)
    .filter(Boolean);
  return [...words, scriptPath];
}

/** Ruby's Time#to_s in local time: `2026-11-21 16:43:46 +0000`. */
export function rubyTime(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} ${sign}${p(Math.floor(a / 60))}${p(a % 60)}`;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  spawnError?: string;
  /** The errno name of that failure (EACCES, EMFILE…), when there is one: it decides whether the start is retried (start-refusal.ts). */
  spawnCode?: string;
  /** What the run used, where the launcher or its cgroups can tell. */
  usage?: RunUsage;
  /** The kernel's OOM killer ended a process of the run (its memory cgroup's own counter): the status that says so. */
  oom?: string;
  /** Limits the message asked for that this host could not enforce, and why: the run went without them. */
  unenforced?: string[];
}

export interface RunningScript {
  pid: number;
  /** Writes one reply line on the script's fd 4; a script that has gone away is ignored. */
  reply(line: string): void;
  /** Signals the script's whole process group (or run cgroup). */
  kill(signal: NodeJS.Signals): void;
  /** Resolves once the script has exited, fd 3 has been read to the end and rq's markers are in stdio.log. */
  finished: Promise<ExitInfo>;
}

/** One script to start: what a launcher needs to create the process. */
export interface LaunchRequest {
  argv: string[];
  /** The file argv[0] names, when the caller found it an executable file at this start: the launcher does not look for it again. */
  file?: string;
  env: ScriptEnv;
  cwd: string;
  /** stdio.log, opened for append: the script's stdout and stderr. */
  logFd: number;
  /** The RQ START header's fields besides the pid, which only the started process knows. */
  header: { time: string; script: string };
  /** RLIMIT_FSIZE for the process, SIGXFSZ ignored (max_log_bytes, run-log.ts); absent: unchanged. */
  fileSizeLimit?: number;
  /** The message id, which the run cgroup's log lines name (run-cgroups.ts). */
  msgId?: string;
  /** A cgroup v2 directory the process is in before the script's first instruction, so all it forks is too. */
  cgroup?: string;
  /** cgroup.procs files of cgroup v1 hierarchies (the run's limits) the process joins before the script's first instruction. */
  joins?: string[];
  /** What the run may use (run-cgroups.ts makes its cgroups from them). */
  limits?: RunLimits;
}

/** A started process: its pid, rq's ends of fds 3 and 4, and its exit. */
export interface LaunchedChild {
  pid: number;
  fromScript: FromScript;
  toScript: ToScript;
  exited: Promise<ExitInfo>;
  /** Signals the whole process group the launcher made for it (or its run cgroup). */
  kill(signal: NodeJS.Signals): void;
  /** Ends what the script left running once it has exited (`exit`: how), where that is not just its process group (a run cgroup). */
  endLeftovers?(log: Logger, graceMs: number, exit: ExitInfo): void;
}

/** Signals process group `pid` (scripts lead their own); a group already gone is not an error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // Group already gone.
  }
}

/**
 * Starts a process in its own session with stdin at EOF, stdout/stderr on `logFd`, fds 3/4 as
 * pipes, nice 19 from its first instruction, and the RQ START header in its log before anything
 * it prints. Failing to start is reported through `exited` (spawnError), never thrown.
 */
export type Launcher = (r: LaunchRequest) => LaunchedChild;

/** What a launcher returns for a process it could not start. */
export function failedLaunch(spawnError: string, spawnCode?: string): LaunchedChild {
  const nothing = new net.Socket();
  nothing.destroy();
  const exit: ExitInfo = { code: null, signal: null, spawnError, ...(spawnCode ? { spawnCode } : {}) };
  return { pid: -1, fromScript: streamFromScript(nothing), toScript: streamToScript(nothing), exited: Promise.resolve(exit), kill: () => undefined };
}

/** The header line of spec §4.5, for launchers that can format it themselves. */
export function startHeader(pid: number | string, h: LaunchRequest['header']): string {
  return `\n${pid} - ${h.time} - RQ START - ${h.script}\n`;
}

export interface StartOptions {
  /** The message the script runs for. */
  msgId: string;
  argv: string[];
  /** LaunchRequest's `file`. */
  file?: string;
  env: ScriptEnv;
  jobDir: string;
  onLine: (line: string) => void;
  output: OutputBounds;
  /** The run's logger: a cut line and a full stdio.log are warned about there. */
  log: Logger;
  /** How long to wait for fd 3 to close after exit before finishing anyway (a daemonised grandchild may hold it). */
  drainMs?: number;
  /** TERM to KILL for what the script leaves running in its group or cgroup when it exits (its queue's kill grace). */
  leftoverGraceMs?: number;
  /** What the run may use. */
  limits?: RunLimits;
  now?: () => Date;
}

export function startScript(o: StartOptions, launch: Launcher): RunningScript {
  const runLog = RunLog.open(o.jobDir, o.output, o.log);
  let child: LaunchedChild;
  try {
    const header = { time: rubyTime(o.now?.() ?? new Date()), script: o.argv[o.argv.length - 1] };
    child = launch({
      msgId: o.msgId,
      argv: o.argv,
      env: o.env,
      cwd: o.jobDir,
      logFd: runLog.fd,
      header,
      ...(o.file === undefined ? {} : { file: o.file }),
      ...(runLog.sizeLimit === null ? {} : { fileSizeLimit: runLog.sizeLimit }),
      ...(o.limits ? { limits: o.limits } : {}),
    });
  } finally {
    runLog.closeFd();
  }
  const { pid, fromScript, toScript } = child;
  const splitter = new LineSplitter(o.output.maxLineBytes);
  const take = (lines: SplitLine[]) => {
    for (const line of lines) {
      if (typeof line === 'string') o.onLine(line);
      else runLog.lineCut(line.cutBytes);
    }
  };
  const drained = new Promise<void>((resolve) => fromScript.read((chunk) => take(splitter.push(chunk)), resolve)).then(() => take(splitter.end()));
  const finished = child.exited.then(async (info) => {
    // The run ends with its script: what it left gets TERM now, not once fd 3 closes, which a background job holding it (`job &` inherits it) would put off.
    if (child.endLeftovers) child.endLeftovers(o.log, o.leftoverGraceMs ?? 10_000, info);
    else endLeftovers(pid, o.log, o.leftoverGraceMs ?? 10_000);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise<void>((r) => (timer = setTimeout(r, o.drainMs ?? 2000)))]);
    clearTimeout(timer);
    fromScript.destroy();
    toScript.destroy();
    await runLog.close();
    return info;
  });
  return {
    pid,
    reply(line) {
      toScript.write(`${line}\n`);
    },
    kill: (signal) => child.kill(signal),
    finished,
  };
}
