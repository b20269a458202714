// rq-mgr in the foreground: supervises queues, web and timers; watches scandir/; answers its socket.
import fs from 'node:fs/promises';
import type { Logger } from 'pino';
import { rootPaths } from '../config/paths.js';
import { loadGlobalConfig } from '../config/global-config.js';
import { webLimits } from '../config/web-limits.js';
import { exposureWarnings } from '../config/exposure.js';
import { queueNameRoom, rootSocketProblem } from '../config/socket-paths.js';
import { listenSocket } from '../ipc/socket-server.js';
import { createLogger } from '../log.js';
import { DAEMON_UMASK, untilStopped } from '../daemon.js';
import { handleMgrRequest, mgrCommands, refusedQueues } from './mgr-commands.js';
import { ScanDir } from './scandir.js';
import { Supervisor } from './supervisor.js';
import { LimitsService } from './limits-service.js';
import { claimPidFile } from './pid-file.js';

export interface RunOptions {
  root: string;
  log?: Logger;
  /** Stop when stdin ends (the parent that holds it went away). */
  watchStdin?: boolean;
}

/** Runs until SIGTERM/SIGINT; resolves after the final shutdown. */
export async function runMgr(opts: RunOptions): Promise<number> {
  const paths = rootPaths(opts.root);
  const log = opts.log ?? createLogger({ name: 'rq-mgr', fd: 1 });
  process.title = '[rq-mgr]';
  process.umask(DAEMON_UMASK);
  // A root too long for its sockets would have them cut short: refused before anything listens.
  const rootProblem = rootSocketProblem(opts.root);
  if (rootProblem) {
    log.error({ root: opts.root, reason: rootProblem }, 'root path too long for its sockets. Exiting');
    process.stderr.write(`rq-mgr: ${rootProblem}\n`);
    return 1;
  }
  let config;
  try {
    config = await loadGlobalConfig(paths.configFile);
  } catch (err) {
    log.error({ err: (err as Error).message }, 'Bad config file. Exiting');
    process.stderr.write(`rq-mgr: ${(err as Error).message}\n`);
    return 1;
  }
  if (config.tmpdir) {
    try {
      await fs.access(config.tmpdir, fs.constants.W_OK);
    } catch {
      log.error({ tmpdir: config.tmpdir }, "Bad 'tmpdir' in config json");
      process.stderr.write(`rq-mgr: Bad 'tmpdir' in config json [${config.tmpdir}]: not a writable directory\n`);
      return 1;
    }
  }
  const { mode } = await fs.stat(paths.configFile);
  for (const warning of exposureWarnings(config, mode)) log.warn(warning);
  const claim = await claimPidFile(paths.mgrPid);
  if (!claim.ok) {
    process.stderr.write(`rq-mgr: already running with pid ${claim.pid} (${paths.mgrPid})\n`);
    return 1;
  }
  await fs.mkdir(paths.queues, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, RQ_ROOT: opts.root };
  if (config.env) env.RQ_ENV = String(config.env);
  if (config.tmpdir) env.TMPDIR = String(config.tmpdir);

  const limits = new LimitsService({ root: opts.root, log: log.child({ component: 'limits' }) });
  await limits.start();
  const sup = new Supervisor({ root: opts.root, log, env, queueExited: (name, how) => void limits.queueExited(name, how), webGraceMs: webLimits(config).shutdownGraceMs, queueMemory: config.queue_memory });
  await sup.start();
  limits.arbiter.expect(sup.queueNames());
  const scandir = new ScanDir(sup, log.child({ component: 'scandir' }));
  await scandir.start();
  const handlers = mgrCommands(config.env === undefined ? undefined : String(config.env), limits.commands(), () => refusedQueues(sup, scandir));
  const server = await listenSocket({ path: paths.mgrSock, proto: 'rq1', log, maxConnections: config.max_socket_connections, handle: (p) => handleMgrRequest(sup, handlers, p, log) });
  log.info({ root: opts.root, pid: process.pid, queues: sup.queueNames(), queue_name_max: queueNameRoom(opts.root).maxBytes }, 'rq-mgr started');

  untilStopped({
    log,
    watchStdin: opts.watchStdin,
    onStop: async () => {
      sup.retire();
      await server.close();
      await scandir.close();
      await sup.shutdown();
      limits.close();
      await fs.rm(paths.mgrSock, { force: true });
      await claim.release();
      log.info('FINAL SHUTDOWN - EXITING');
    },
    onHup: () => {
      log.info('SIGHUP: reloading');
      void sup.reload().then(() => scandir.kick());
    },
  });
  // The lifecycle exits the process once everything is stopped.
  return new Promise<number>(() => undefined);
}
