// Lowering a queue process's fd limit: through util-linux prlimit where it is here, else through a shell's ulimit.
import { execFileSync } from 'node:child_process';

export function hasPrlimit(): boolean {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A QueueProc `wrap` that starts it with at most `n` open files; both forms exec node itself, so the pid stays the queue's. */
export function fdLimitWrap(n: number): string[] {
  return hasPrlimit() ? ['prlimit', `--nofile=${n}:${n}`, '--'] : ['/bin/sh', '-c', `ulimit -n ${n} && exec "$@"`, 'rq-queue'];
}
