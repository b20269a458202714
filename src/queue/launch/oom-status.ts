// The status of a run the kernel's OOM killer ended: at its own memory_max, or for memory short beyond the run; whichever cgroup version counted it.
import { type RunLimits, formatSize } from '../../message/run-limits.js';

/** At memory_max when the run's own limit was hit (v1: its failcnt rose; v2: its `oom` event); else the kernel's OOM killer for memory beyond the run (the host, a parent cgroup). */
export function oomStatus(limits: RunLimits, peak: number | undefined, hitLimit: boolean): string {
  const peakText = peak === undefined ? '' : ` (peak ${formatSize(Math.round(peak / 1024 ** 2) * 1024 ** 2)})`;
  return hitLimit && limits.memory_max !== undefined
    ? `OOM - killed at memory_max ${formatSize(limits.memory_max)}${peakText}`
    : `OOM - killed by the kernel's OOM killer, short of memory beyond the run${peakText}`;
}
