// What every rq daemon does alike: one stop for TERM, INT, a command or its parent going away; the log flushed; the exit.
import type { Logger } from 'pino';

export interface Lifecycle {
  /** Stops once, however many times it is asked, then exits the process with 0. */
  stop(why: string): Promise<void>;
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

/**
 * Installs the handlers at once, so a stop that arrives while the daemon is still starting (a
 * watch not ready yet, a deep que loading) is not lost; the exit does not wait for the start.
 */
export function untilStopped(o: LifecycleOptions): Lifecycle {
  let stopping: Promise<void> | null = null;
  const stop = (why: string) => {
    stopping ??= (async () => {
      o.log.info({ why }, 'stopping');
      await o.onStop();
      o.log.info('stopped');
      // The log's last lines may be in a write in flight (log-destination.ts); a disk that never answers costs 2 s, not the exit.
      await new Promise<void>((resolve) => {
        setTimeout(resolve, 2000).unref();
        o.log.flush(() => resolve());
      });
      process.exit(0);
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
  return { stop };
}

/**
 * What every daemon and the scripts it starts create is not world-readable (messages, logs,
 * uploads: 0640 and 0750); rq-mgr sets it before it starts anything, so its children inherit it.
 */
export const DAEMON_UMASK = 0o027;

/**
 * Runs a daemon's main: it returns once started (its lifecycle exits the process later), or an
 * exit code when it cannot start; a failure to start is one stderr line and exit 1.
 */
export function daemonMain(name: string, main: () => Promise<number | void>): void {
  process.umask(DAEMON_UMASK);
  main().then(
    (code) => {
      if (typeof code === 'number') process.exit(code);
    },
    (err) => {
      process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

/**
 * What a child of rq-mgr tells it over the channel rq-mgr opened (`Worker`): that it serves now
 * (its socket or port listens; the web says at which URL), or why it cannot, with the fix; rq-mgr
 * says it once and backs off.
 */
export type ParentReport = { rq: 'ready'; url?: string } | { rq: 'alive' } | { rq: 'problem'; key: string; reason: string; fix: string };

/** How often a child that serves tells rq-mgr it still does: its event loop turns (WorkerPolicy.silentMs is the bound rq-mgr keeps). */
export const HEARTBEAT_MS = 2000;

/** Tells rq-mgr every HEARTBEAT_MS that this process's event loop still turns, for as long as it runs. */
export function heartbeatParent(): void {
  if (!process.send) return;
  setInterval(() => void tellParent({ rq: 'alive' }), HEARTBEAT_MS).unref();
}

/** Sends a report to rq-mgr when it started this process; resolves once it is sent (before an exit), at once without a channel. */
export function tellParent(report: ParentReport): Promise<void> {
  const send = process.send?.bind(process);
  if (!send || !process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    send(report, undefined, {}, () => resolve());
    // The channel is for these reports only: it must not keep a stopping process alive.
    process.channel?.unref();
  });
}
