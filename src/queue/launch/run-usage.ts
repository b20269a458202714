// What one run used (CPU time, peak memory, processes, IO, throttling), from its cgroups or from the reap's rusage, as its history line and metrics give it.

/** A run's accounting; the fields a source cannot tell are absent. */
export interface RunUsage {
  cpu_user_ms: number;
  cpu_system_ms: number;
  /** Absent where no source can tell it (rusageOf). */
  memory_peak_bytes?: number;
  pids_peak?: number;
  /** Bytes read from storage and written to it (counted as pages are dirtied), not what the page cache served. */
  io_read_bytes?: number;
  io_write_bytes?: number;
  /** Time the run waited because of cpu_max. */
  throttled_ms?: number;
  /** Times the run hit pids_max (a fork or clone refused). */
  pids_refused?: number;
  /** Times the run reached memory_high and was held there (MemoryHigh), and the time it was held. */
  memory_high_holds?: number;
  memory_high_held_ms?: number;
  /** Processes of the run the kernel's OOM killer ended (the script itself or a child it survived). */
  oom_kills?: number;
  /**
   * `cgroup`: every process of the run, read from its cgroups as its script exits. `rusage`: the
   * script and the descendants it reaped (wait4), peak memory being the largest one's, where the
   * run has no accounting cgroups (no limits set, or a host without usable controllers).
   */
  source: 'cgroup' | 'rusage';
}

/**
 * Usage from wait4's rusage: microseconds of user and system time, peak RSS in KiB, blocks of 512 bytes read and written.
 * The kernel carries the peak of the memory a process had before its exec into its own (exec_mmap), and a script is
 * spawned from the queue's memory: every run would say the queue's peak (about 55 MB) as its own. So the peak is
 * given only when it is above `ownMaxRssKiB`, the queue process's own peak as the reap reads it, and then it is the
 * run's; below, the run's peak is unknown and left out.
 */
export function rusageOf(userUs: number, systemUs: number, maxRssKiB: number, inBlocks: number, outBlocks: number, ownMaxRssKiB: number): RunUsage {
  return {
    cpu_user_ms: Math.round(userUs / 1000),
    cpu_system_ms: Math.round(systemUs / 1000),
    ...(maxRssKiB > ownMaxRssKiB ? { memory_peak_bytes: maxRssKiB * 1024 } : {}),
    io_read_bytes: inBlocks * 512,
    io_write_bytes: outBlocks * 512,
    source: 'rusage',
  };
}
