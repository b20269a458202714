// The timers process: `node dist/timers/timers-main.js --root DIR [--watch-stdin]`, started by rq-mgr.
import fsp from 'node:fs/promises';
import { rootPaths } from '../config/paths.js';
import { resolveRoot } from '../config/root.js';
import { parseArgs } from '../args.js';
import { createLogger } from '../log.js';
import { listenSocket } from '../ipc/socket-server.js';
import { createDelivery } from './timer-delivery.js';
import { TimerDir } from './timer-dir.js';
import { TimerTable, newStats } from './timer-table.js';
import { handleTimersRequest } from './timer-commands.js';

/** How long a queue may take to accept a timer message before the attempt counts as failed. */
const DELIVERY_TIMEOUT_MS = 10_000;

export async function main(argv: string[]): Promise<void> {
  const { opts } = parseArgs(['timers', ...argv]);
  const root = resolveRoot(typeof opts.root === 'string' ? opts.root : undefined);
  const paths = rootPaths(root);
  const log = createLogger({ name: 'rq-timers', fd: 1 });
  process.title = '[rq-timers]';
  // rq-mgr exports config.json's `env`; short periods exist only so tests need not wait a minute.
  const allowShortPeriod = process.env.RQ_ENV === 'test';

  await fsp.mkdir(paths.timers, { recursive: true });
  const stats = newStats();
  const table = new TimerTable({ deliver: createDelivery({ root, timeoutMs: DELIVERY_TIMEOUT_MS }), stats, log });
  const dir = new TimerDir({ dir: paths.timers, table, stats, allowShortPeriod, log });
  const server = await listenSocket({ path: paths.timersSock, proto: 'rq2', log, handle: (payload) => handleTimersRequest({ table, stats }, payload) });

  let stopping: Promise<void> | null = null;
  const stop = (why: string) => {
    stopping ??= (async () => {
      log.info({ why }, 'stopping');
      await dir.close();
      await table.close();
      await server.close();
      await fsp.rm(paths.timersSock, { force: true });
      log.info('stopped');
      log.flush?.();
      process.exit(0);
    })();
    return stopping;
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A full rescan on demand: links whose target appeared later are picked up without an edit of the link.
  process.on('SIGHUP', () => void dir.rescan());
  // rq-mgr holds the other end of our stdin: when it goes away, so do we.
  if (opts['watch-stdin']) {
    process.stdin.on('end', () => void stop('parent went away'));
    process.stdin.on('error', () => void stop('parent went away'));
    process.stdin.resume();
  }

  await dir.start();
  log.info({ pid: process.pid, timers: table.list().map(([name]) => name), short_periods: allowShortPeriod }, 'timers started');
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`rq-timers: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
