// Launcher on Node's child_process: the portable fallback when the native spawner is not built.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { findExecutable } from './find-executable.js';
import { NUL_REFUSAL, holdsNul } from './nul-bytes.js';
import { type ExitInfo, type Launcher, failedLaunch, killGroup } from './script-runner.js';
import { streamFromScript } from './from-script.js';
import { streamToScript } from './to-script.js';

/**
 * The start gate: a constant sh program (data only ever arrives as arguments) that waits for one
 * newline on fd 4 — written by rq once the script's priority is set — then prints the RQ START
 * header with its own pid (which the script keeps across exec) and execs the script. Node has no
 * pre-exec hook; without the gate the script could print before its header and run its first
 * instructions at normal priority. It costs one exec of sh per message (~1 ms here).
 * With a file size limit ($3) it ignores SIGXFSZ and has util-linux prlimit set its own soft
 * RLIMIT_FSIZE in bytes (sh's `ulimit -f` counts blocks), which exec keeps. Where prlimit is missing
 * or refuses (a lower hard limit), the script runs without it and RunLog.close cuts stdio.log back.
 *
 * With a run cgroup (and the cgroup v1 hierarchies of its limits), rq moves the gate into them before
 * the newline, so the script is in them from its first instruction.
 *
 * An exec the kernel refuses makes sh exit 126 or 127, which a script may exit with too: the trap
 * tells them apart by writing that status on fd 5, which the script itself never holds.
 */
const GATE = [
  'read _ <&4 || exit 111; printf "\\n%s - %s - RQ START - %s\\n" "$$" "$1" "$2"; lim=$3; shift 3',
  'if [ -n "$lim" ]; then trap "" XFSZ; prlimit --pid $$ --fsize="$lim": >/dev/null 2>&1; fi',
  "trap 'echo $? >&5' EXIT",
  'exec "$@" 5>&-',
].join('; ');

/** The errno an exit status of sh's failed exec stands for (127: not found; 126: found, not executable). */
const EXEC_STATUS: Record<string, string> = { '126': 'EACCES', '127': 'ENOENT' };

export const gateLauncher: Launcher = (r) => {
  // Refused as the native spawner refuses it: child_process would throw instead.
  if (holdsNul(r)) return failedLaunch(NUL_REFUSAL);
  // Checked here, since sh would report a missing program as its own exit 127.
  if (r.file === undefined && !findExecutable(r.argv[0], r.cwd, r.env.get('PATH'))) return failedLaunch(`spawn ${r.argv[0]} ENOENT`, 'ENOENT');
  const limit = r.fileSizeLimit === undefined ? '' : String(r.fileSizeLimit);
  const child = spawn('/bin/sh', ['-c', GATE, 'rq-start', r.header.time, r.header.script, limit, ...r.argv], {
    cwd: r.cwd,
    env: r.env.object(),
    stdio: ['ignore', r.logFd, r.logFd, 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let execStatus = '';
  let moveFailed: NodeJS.ErrnoException | null = null;
  const execChecked = new Promise<void>((resolve) => {
    const status = (child.stdio as unknown as Array<Readable | undefined>)[5];
    if (!status) return resolve();
    status.on('data', (c: Buffer) => (execStatus += c.toString()));
    status.on('close', resolve);
    status.on('error', resolve);
  });
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      void execChecked.then(() => {
        if (moveFailed)
          return resolve({
            code,
            signal,
            spawnError: `could not move the script into its cgroup: ${moveFailed.message}`,
            ...(moveFailed.code ? { spawnCode: moveFailed.code } : {}),
          });
        const failed = execStatus.trim();
        if (!failed) return resolve({ code, signal });
        resolve({ code, signal, spawnError: `sh could not exec ${r.argv[0]} (exit ${failed})`, spawnCode: EXEC_STATUS[failed] ?? 'EACCES' });
      });
    });
    child.once('error', (err: NodeJS.ErrnoException) =>
      resolve({ code: null, signal: null, spawnError: err.message, ...(err.code ? { spawnCode: err.code } : {}) }),
    );
  });
  // Not started (EMFILE, EAGAIN…): Node says why on the next tick and has made no pipes.
  if (child.pid === undefined) return { ...failedLaunch('not started'), exited };
  const pid = child.pid;
  try {
    os.setPriority(pid, 19);
  } catch {
    // Already exited: its priority no longer matters.
  }
  const toScript = streamToScript(child.stdio[4] as Writable);
  const procs = [...(r.cgroup === undefined ? [] : [path.join(r.cgroup, 'cgroup.procs')]), ...(r.joins ?? [])];
  if (procs.length === 0) toScript.write('\n');
  else {
    // Asynchronous: a move into a cgroup waits for an RCU grace period (~12 ms), the gate meanwhile.
    // O_WRONLY without O_CREAT: a directory that is no cgroup gets no file.
    Promise.all(procs.map((file) => fsp.writeFile(file, String(pid), { flag: fs.constants.O_WRONLY }))).then(
      () => toScript.write('\n'),
      (err: NodeJS.ErrnoException) => {
        // Gone already (a kill came first): its exit says what happened.
        if (err.code === 'ESRCH') return;
        // Not released outside its cgroup, where nothing would end what it leaves.
        moveFailed = err;
        killGroup(pid, 'SIGKILL');
      },
    );
  }
  return {
    pid,
    fromScript: streamFromScript(child.stdio[3] as Readable),
    toScript,
    kill: (signal) => killGroup(pid, signal),
    exited,
  };
};
