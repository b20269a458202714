// The timers process: `node dist/timers/timers-main.js --root DIR [--watch-stdin]`, started by rq-mgr.
import fsp from 'node:fs/promises';
import { rootPaths } from '../config/paths.js';
import { resolveRoot } from '../config/root.js';
import { parseArgs } from '../args.js';
import { createLogger } from '../log.js';
import { daemonMain, untilStopped } from '../daemon.js';
import { listenSocket } from '../ipc/socket-server.js';
import { createDelivery } from './timer-delivery.js';
import { TimerDir } from './timer-dir.js';
import { TimerTable, newStats } from './timer-table.js';
import { handleTimersRequest } from './timer-commands.js';

/** How long a queue may take to accept a timer message before the attempt counts as failed. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** How long a delivery waits for a queue that is not listening yet (starting with rq-mgr) before it counts as failed. */
const QUEUE_START_WAIT_MS = 30_000;

export async function main(argv: string[]): Promise<void> {
  const { opts } = parseArgs(['timers', ...argv]);
  const root = resolveRoot(typeof opts.root === 'string' ? opts.root : undefined);
  const paths = rootPaths(root);
  const log = createLogger({ name: 'rq-timers', fd: 1, terminalLevel: 'warn' });
  process.title = '[rq-timers]';
  // rq-mgr exports config.json's `env`; short periods exist only so tests need not wait a minute.
  const allowShortPeriod = process.env.RQ_ENV === 'test';

  await fsp.mkdir(paths.timers, { recursive: true });
  const stats = newStats();
  const stopping = new AbortController();
  const table = new TimerTable({
    deliver: createDelivery({ root, timeoutMs: DELIVERY_TIMEOUT_MS, startWaitMs: QUEUE_START_WAIT_MS, stopping: stopping.signal }),
    stats,
    log,
  });
  const dir = new TimerDir({ dir: paths.timers, table, stats, allowShortPeriod, log });
  const server = await listenSocket({
    path: paths.timersSock,
    proto: 'rq2',
    log,
    handle: (payload, conn) => handleTimersRequest({ table, stats, dir }, payload, conn),
  });

  untilStopped({
    log,
    watchStdin: opts['watch-stdin'] === true,
    onStop: async () => {
      stopping.abort();
      await dir.close();
      await table.close();
      await server.close();
      await fsp.rm(paths.timersSock, { force: true });
    },
    // A full rescan on demand: links whose target appeared later are picked up without an edit of the link.
    onHup: () => void dir.rescan(),
  });

  await dir.start();
  log.info({ pid: process.pid, timers: table.list().map(([name]) => name), short_periods: allowShortPeriod }, 'timers started');
}

daemonMain('rq-timers', () => main(process.argv.slice(2)));
