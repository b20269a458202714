// What every rq daemon does alike: one stop for TERM, INT, a command or its parent going away; the log flushed; the exit.
import type { Logger } from 'pino';

export interface Lifecycle {
  /** Stops once, however many times it is asked; resolves when the stop is done. */
  stop(why: string): Promise<void>;
  /** Resolves when a stop has finished. */
  readonly stopped: Promise<void>;
}

export interface LifecycleOptions {
  log: Logger;
  /** Releases what the daemon holds (sockets, children, files). */
  onStop: () => Promise<void>;
  /** SIGHUP: reload. */
  onHup?: () => void;
  /** rq-mgr holds the other end of our stdin: when it goes away, so do we. */
  watchStdin?: boolean;
}

export function untilStopped(o: LifecycleOptions): Lifecycle {
  let done!: () => void;
  const stopped = new Promise<void>((r) => (done = r));
  let stopping: Promise<void> | null = null;
  const stop = (why: string) => {
    stopping ??= (async () => {
      o.log.info({ why }, 'stopping');
      await o.onStop();
      o.log.info('stopped');
      o.log.flush?.();
      done();
    })();
    return stopping;
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  if (o.onHup) process.on('SIGHUP', o.onHup);
  if (o.watchStdin) {
    process.stdin.on('end', () => void stop('parent went away'));
    process.stdin.on('error', () => void stop('parent went away'));
    process.stdin.resume();
  }
  return { stop, stopped };
}

/**
 * Runs a daemon's main: its exit code when it returns one (after its stop), 1 with one stderr
 * line when it fails to start.
 */
export function daemonMain(name: string, main: () => Promise<number>): void {
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
