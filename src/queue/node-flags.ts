// How a queue process is started for memory: its V8 flags and allocator settings. A host runs one per queue, so memory comes before a burst's last percent of speed.
/**
 * `--max-semi-space-size=1` keeps the young generation at 2 MiB instead of letting a burst grow it to
 * 32 MiB; `--heap-growing-percent=20` lets the old generation grow 20 % past its live size between
 * full collections instead of up to 4×. Measured in docs/performance.md: a drain of 3,000
 * messages peaked at 77 MB instead of 120, and 2,000 queued light messages of 64 KiB at 84-89 MB instead of 173.
 * Both are refused in NODE_OPTIONS, so they go on the command line.
 */
const QUEUE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1', '--heap-growing-percent=20'];

/** `queue_memory` in config/config.json: how queue processes trade CPU for memory. */
export type QueueMemory = 'default' | 'lean';

/**
 * `lean` adds `--max-opt=2`: no TurboFan (and in Node 20 no Maglev either), so a queue never pages in
 * the optimizing compiler. Measured (docs/performance.md, Knobs and trade-offs): an idle queue 4 MB smaller in
 * RSS (0.3 MB in private memory: the rest is the node binary's pages, shared), a drain of 2,000 messages peaking 6.8 MB lower, for 2-15 % more CPU per create and drains 7-21 %
 * slower. For a host with many mostly idle queues; not the default.
 */
export function queueNodeFlags(memory: QueueMemory = 'default'): readonly string[] {
  return memory === 'lean' ? [...QUEUE_NODE_FLAGS, '--max-opt=2'] : QUEUE_NODE_FLAGS;
}

/** A queue process's environment, and the names in it that rq put there for the queue alone. */
export interface QueueEnv {
  env: NodeJS.ProcessEnv;
  /** Passed as `--not-inherited a,b`: the queue leaves them out of its scripts' environment. */
  notInherited: string[];
}

/**
 * glibc's malloc keeps freed memory at the top of its heaps up to a threshold it raises on its own
 * (to 32 MiB and more) once large buffers come and go, as 64 KiB message bodies do: a que of 20,000
 * of them held 102.6 MB of RSS, 88.6 MB with the threshold fixed at 128 KiB (docs/performance.md).
 * Other allocators ignore it. An operator's own value is kept, and is the only one scripts inherit:
 * rq's is for the queue process, not for every script a queue runs.
 */
export function queueEnv(env: NodeJS.ProcessEnv): QueueEnv {
  if (env.MALLOC_TRIM_THRESHOLD_ !== undefined) return { env, notInherited: [] };
  return { env: { ...env, MALLOC_TRIM_THRESHOLD_: '131072' }, notInherited: ['MALLOC_TRIM_THRESHOLD_'] };
}

/** The queue's argv words that carry `notInherited`. */
export function notInheritedArgs(names: readonly string[]): string[] {
  return names.length === 0 ? [] : ['--not-inherited', names.join(',')];
}
