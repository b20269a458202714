// Whether a launcher can start a script inside a cgroup here: a probe process, started once when a queue opens its run cgroups.
import fs from 'node:fs';
import path from 'node:path';
import { removeCgroup } from './cgroup-fs.js';
import { REMOVE_MS } from './leftovers.js';
import type { Launcher } from './script-runner.js';
import { ScriptEnv } from './script-env.js';

/**
 * Why `launch` cannot start a process in a cgroup under `parent`, or null when it can: a seccomp
 * filter refusing clone3 (older container runtimes), a delegation without write access to the
 * queue's own cgroup.procs, a native spawner built for another architecture.
 */
export async function probe(parent: string, launch: Launcher): Promise<string | null> {
  const dir = path.join(parent, 'probe');
  fs.mkdirSync(dir);
  const logFd = fs.openSync('/dev/null', 'w');
  let exit;
  try {
    const child = launch({ argv: ['/bin/sh', '-c', 'exit 0'], env: ScriptEnv.of({}), cwd: '/', logFd, header: { time: '', script: 'probe' }, cgroup: dir });
    exit = await child.exited;
    child.fromScript.destroy();
    child.toScript.destroy();
  } finally {
    fs.closeSync(logFd);
    await removeCgroup(dir, REMOVE_MS);
  }
  if (exit.spawnError !== undefined) return `a script cannot be started in a cgroup: ${exit.spawnError}`;
  return exit.code === 0 ? null : `a probe started in a cgroup exited with ${exit.code ?? exit.signal}`;
}
