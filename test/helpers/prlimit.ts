// Whether util-linux prlimit is here: tests that lower a process's fd limit exec through it, else through a shell's ulimit.
import { execFileSync } from 'node:child_process';

export function hasPrlimit(): boolean {
  try {
    execFileSync('prlimit', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
