// How long a process's main thread has waited for a CPU: what a latency bound on two shared cores leaves out, since it says nothing of the code under test.
import { readFileSync } from 'node:fs';

/** Milliseconds a process's main thread (its event loop) has waited on a run queue: schedstat's second field. */
export function runQueueWaitMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
}
