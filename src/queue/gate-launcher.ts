// Launcher on Node's child_process: the portable fallback when the native spawner is not built.
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { findExecutable } from './find-executable.js';
import { type ExitInfo, type Launcher, failedLaunch, killGroup } from './script-runner.js';

/**
 * The start gate: a constant sh program (data only ever arrives as arguments) that waits for one
 * newline on fd 4 — written by rq once the script's priority is set — then prints the RQ START
 * header with its own pid (which the script keeps across exec) and execs the script. Node has no
 * pre-exec hook; without the gate the script could print before its header and run its first
 * instructions at normal priority. It costs one exec of sh per message (~1 ms here).
 * With a file size limit ($3) it ignores SIGXFSZ and has util-linux prlimit set its own soft
 * RLIMIT_FSIZE in bytes (sh's `ulimit -f` counts blocks), which exec keeps. Where prlimit is missing
 * or refuses (a lower hard limit), the script runs without it and RunLog.close cuts stdio.log back.
 */
const GATE = [
  'read _ <&4 || exit 111; printf "\\n%s - %s - RQ START - %s\\n" "$$" "$1" "$2"; lim=$3; shift 3',
  'if [ -n "$lim" ]; then trap "" XFSZ; prlimit --pid $$ --fsize="$lim": >/dev/null 2>&1; fi',
  'exec "$@"',
].join('; ');

export const gateLauncher: Launcher = (r) => {
  // Checked here, since sh would report a missing program as its own exit 127.
  if (!findExecutable(r.argv[0], r.cwd, r.env.PATH)) return failedLaunch(`spawn ${r.argv[0]} ENOENT`);
  const limit = r.fileSizeLimit === undefined ? '' : String(r.fileSizeLimit);
  const child = spawn('/bin/sh', ['-c', GATE, 'rq-start', r.header.time, r.header.script, limit, ...r.argv], {
    cwd: r.cwd,
    env: r.env,
    stdio: ['ignore', r.logFd, r.logFd, 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid ?? -1;
  if (pid > 0) {
    try {
      os.setPriority(pid, 19);
    } catch {
      // Already exited: its priority no longer matters.
    }
  }
  const toScript = child.stdio[4] as Writable;
  toScript.on('error', () => undefined);
  toScript.write('\n');
  return {
    pid,
    fromScript: child.stdio[3] as Readable,
    toScript,
    kill: (signal) => killGroup(pid, signal),
    exited: new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', (err) => resolve({ code: null, signal: null, spawnError: err.message }));
    }),
  };
};
