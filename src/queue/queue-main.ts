// The queue process: `node dist/queue/queue-main.js --root DIR --name Q [--watch-stdin] [--not-inherited A,B]`.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SCRIPT_DIRS_MARKER, scriptOutsideProblem } from '../config/script-dirs.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import { hostInfo, loadGlobalConfig } from '../config/global-config.js';
import { loadQueueConfig } from '../config/queue-config.js';
import { parseArgs } from '../args.js';
import { resolveRoot } from '../config/root.js';
import { createLogger } from '../log.js';
import { daemonMain, tellParent, untilStopped } from '../daemon.js';
import { type SocketServer, listenSocket } from '../ipc/socket-server.js';
import { parseRequest } from '../ipc/rq1.js';
import { QueueClient } from '../ipc/queue-client.js';
import { assertQueueName } from '../message/names.js';
import { handleRequest } from './commands/commands.js';
import { Queue } from './queue.js';
import { chooseLauncher } from './launch/native-launcher.js';
import { RunCgroups } from './launch/run-cgroups.js';
import { inheritedEnv } from './launch/run-policy.js';
import { type CronQueue, QueueCron } from './cron/queue-cron.js';
import { cronStateFile } from './cron/cron-state.js';
import { type EventFeed, startEventFeed } from './observers/event-feed.js';
import { spanTarget } from '../config/otlp-endpoint.js';
import { tracingFor } from './observers/otlp-tracing.js';

export async function main(argv: string[]): Promise<void> {
  const { opts } = parseArgs(['queue', ...argv]);
  const root = resolveRoot(typeof opts.root === 'string' ? opts.root : undefined);
  const name = assertQueueName(opts.name);
  const paths = queuePaths(root, name);
  const log = createLogger({ name: `rq-que ${name}`, fd: 1, terminalLevel: 'warn' }).child({ queue: name });
  process.title = `[rq-que] [${name}]`;

  const global = await loadGlobalConfig(rootPaths(root).configFile);
  const load = () => loadQueueConfig(paths.configFile);
  const launch = chooseLauncher(process.env, log);
  const config = await load();
  const tracing = await tracingFor(spanTarget(global, process.env), log);
  const cgroups = new RunCgroups({ name, queueDir: paths.dir, log, env: process.env, limits: config, bestEffort: config.limits_best_effort === true });
  const queue = new Queue({
    root,
    config,
    host: hostInfo(global),
    fleetUrl: global.fleet?.advertise.replace(/\/+$/, ''),
    log,
    idempotencyWindowMs: global.idempotency_window_s === undefined ? undefined : global.idempotency_window_s * 1000,
    statsRetention: { days: global.stats_history_days ?? 30, histogramDays: global.histogram_history_days ?? 7 },
    peer: (q) => QueueClient.oneShot(queuePaths(root, q).sock, { timeoutMs: 30_000 }),
    launch: cgroups.around(launch),
    tracing,
    // A snapshot: copying process.env itself costs ~0.2 ms per script (one getenv per variable).
    baseEnv: inheritedEnv(process.env, typeof opts['not-inherited'] === 'string' ? opts['not-inherited'].split(',') : []),
    // A queue made over HTTP runs only scripts inside script_dirs, checked at every start, not only at its creation.
    scriptOutside: fs.existsSync(path.join(paths.dir, SCRIPT_DIRS_MARKER)) ? (given, real) => scriptOutsideProblem(root, global, given, real) : undefined,
  });
  await fsp.writeFile(paths.pidFile, `${process.pid}\n`);

  let cron: QueueCron | null = null;
  let server: SocketServer | null = null;
  let feed: EventFeed | null = null;
  const life = untilStopped({
    log,
    watchStdin: opts['watch-stdin'] === true,
    onStop: async () => {
      queue.events.emit('closing');
      await server?.close();
      await cron?.stop();
      await queue.stop();
      await cgroups.close();
      await feed?.close();
      await fsp.rm(paths.sock, { force: true });
    },
    onHup: () => {
      load().then(
        (config) => {
          queue.reconfigure(config);
          queue.admin.refuseScripts(cgroups.judge(config, config.limits_best_effort === true));
          void cron?.reconfigure(config.schedule ?? []);
        },
        (err) => log.error({ err: (err as Error).message }, 'config reload failed; keeping the old config'),
      );
    },
  });

  // Listening comes first: the socket refuses to start while another process of this queue
  // answers on it (one writer per queue), and ping/status answer while a deep que is loading.
  server = await listenSocket({
    path: paths.sock,
    proto: 'rq1',
    log,
    maxConnections: global.max_socket_connections,
    handle: async (payload, conn) => {
      const reply = await handleRequest(queue, payload, log, conn);
      if (parseRequest(payload).command === 'shutdown') setImmediate(() => void life.stop('shutdown command'));
      return reply;
    },
  });
  // rq-mgr's started line waits for this: from here on a client's request is answered.
  void tellParent({ rq: 'ready' });
  // The live feed is an observer: a queue whose feed cannot listen still runs (GET /events just does not see it).
  const feedDeps = { path: paths.eventsSock, queue: name, events: queue.events, tagsOf: (id: string) => queue.tags.index.tagsOf(id), now: queue.now, log };
  feed = await startEventFeed(feedDeps).catch((err: Error) => {
    log.error({ err: err.message }, 'event feed not started; GET /events will not see this queue');
    return null;
  });
  // After the socket: only the queue's one process may kill what is in its cgroups.
  await cgroups.start(launch);
  if (cgroups.limitsRefusal) queue.admin.refuseScripts(cgroups.limitsRefusal);
  await queue.start();
  // A queue searched before reads its messages into the search index now, not at its next search (docs/observability.md).
  void queue.stats.search.warm();
  // The config's `schedule` (spec §15) creates messages here; the logic lives in queue-cron.ts.
  cron = new QueueCron({ queue: cronView(queue), stateFile: cronStateFile(paths.dir), log: log.child({ component: 'cron' }) });
  await cron.start(queue.config.schedule ?? []);
  const { que, prep } = queue.counts();
  // node_flags: the command line says them no more once the title is set (queue_memory, node-flags.ts).
  log.info({ pid: process.pid, que, prep, node_flags: process.execArgv }, 'queue started');
}

function cronView(queue: Queue): CronQueue {
  return {
    name: queue.name,
    hasPrep: (id) => queue.index.hasPrep(id),
    isDown: () => queue.isDown(),
    create: (fields, commit) => queue.ops.create(fields, commit),
    commit: (id) => queue.ops.commit(id),
  };
}

daemonMain('rq-que', () => main(process.argv.slice(2)));
