// rq-mgr in the foreground: supervises queues, web and timers; watches scandir/; answers its socket.
import fs from 'node:fs/promises';
import type { Logger } from 'pino';
import { rootPaths } from '../config/paths.js';
import { type GlobalConfig, loadGlobalConfig, webUrl } from '../config/global-config.js';
import { webLimits } from '../config/web-limits.js';
import { type EtcdCredentials, readEtcdCredentials } from '../config/fleet-credentials.js';
import { exposureWarnings } from '../config/exposure.js';
import { queueNameRoom, rootSocketProblem } from '../config/socket-paths.js';
import { type SocketServer, listenSocket } from '../ipc/socket-server.js';
import { createLogger } from '../log.js';
import { DAEMON_UMASK, untilStopped } from '../daemon.js';
import { handleMgrRequest, mgrCommands, refusedQueues } from './mgr-commands.js';
import { ScanDir } from './scandir.js';
import { type StartReport, Supervisor } from './supervisor.js';
import type { WorkerProblem } from './worker.js';
import { LimitsService } from './limits-service.js';
import { claimPidFile } from './pid-file.js';
import { FleetMember } from './fleet-member.js';
import { leaveForLeaf } from '../queue/launch/cgroup-leaf.js';

export interface RunOptions {
  root: string;
  log?: Logger;
  /** Stop when stdin ends (the parent that holds it went away). */
  watchStdin?: boolean;
  /** Told once this process holds the root's pid file, before anything starts (`npm start`'s first line). */
  claimed?: () => void;
  /** Told once the start has settled (`npm start`'s line for a person): the web's URL when it listens, else why not. */
  started?: (s: { url: string | null; problem: WorkerProblem | null; notServing: string[] }) => void;
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
  // The fleet's TLS files and password are read now: one that cannot be read, or is no certificate or key, is said before anything starts.
  let credentials: EtcdCredentials | undefined;
  try {
    credentials = config.fleet ? await readEtcdCredentials(config.fleet, paths.configFile) : undefined;
  } catch (err) {
    log.error({ err: (err as Error).message }, 'fleet: bad etcd credentials in config json; this host does not join its fleet. Exiting');
    process.stderr.write(`rq-mgr: ${(err as Error).message}\n`);
    return 1;
  }
  const { mode } = await fs.stat(paths.configFile);
  for (const warning of exposureWarnings(config, mode)) log.warn(warning);
  const claim = await claimPidFile(paths.mgrPid);
  if (!claim.ok) {
    process.stderr.write(`rq-mgr: already running with pid ${claim.pid} (${paths.mgrPid})\n`);
    return 1;
  }
  opts.claimed?.();
  await fs.mkdir(paths.queues, { recursive: true });
  if (process.env.RQ_CGROUP !== 'off') moveToLeaf(log);
  const env: NodeJS.ProcessEnv = { ...process.env, RQ_ROOT: opts.root };
  if (config.env) env.RQ_ENV = String(config.env);
  if (config.tmpdir) env.TMPDIR = String(config.tmpdir);

  const fleet = await FleetMember.start(config, opts.root, log, Date.now(), credentials);
  const limits = new LimitsService({ root: opts.root, log: log.child({ component: 'limits' }), fleet: fleet.slots() ?? undefined });
  const sup = new Supervisor({
    root: opts.root,
    log,
    env,
    queueExited: (name, how) => {
      void limits.queueExited(name, how);
      if (how !== 'restarting') fleet.queueGone(name);
    },
    queueServing: (name) => fleet.queueServing(name),
    webServing: (serves) => fleet.web(serves),
    webGraceMs: webLimits(config).shutdownGraceMs,
    queueMemory: config.queue_memory,
  });
  let scandir: ScanDir | null = null;
  let server: SocketServer | null = null;
  // Before anything starts: a Ctrl-C or TERM at any moment of the start stops what has started, in order.
  untilStopped({
    log,
    watchStdin: opts.watchStdin,
    onStop: async () => {
      sup.retire();
      await fleet.stop();
      await server?.close();
      await scandir?.close();
      await sup.shutdown();
      limits.close();
      await fs.rm(paths.mgrSock, { force: true });
      await claim.release();
      log.info('FINAL SHUTDOWN - EXITING');
    },
    onHup: () => {
      log.info('SIGHUP: reloading');
      void sup.reload().then(() => scandir?.kick());
    },
  });
  // The lifecycle exits the process once everything is stopped.
  const forever = new Promise<number>(() => undefined);
  await limits.start();
  if (sup.stopping) return forever;
  await sup.start();
  if (sup.stopping) return forever;
  limits.arbiter.expect(sup.queueNames());
  scandir = new ScanDir(sup, log.child({ component: 'scandir' }));
  await scandir.start();
  sup.startTimers();
  const handlers = mgrCommands(config.env === undefined ? undefined : String(config.env), limits.commands(), () => refusedQueues(sup, scandir!), {
    view: () => fleet.view(),
    credential: () => fleet.credential(),
    forget: (host) => fleet.forget(host),
  });
  server = await listenSocket({
    path: paths.mgrSock,
    proto: 'rq1',
    log,
    maxConnections: config.max_socket_connections,
    handle: (p, conn) => handleMgrRequest(sup, handlers, p, log, conn),
  });
  if (sup.stopping) return forever;
  // "started" means served: each queue found at start answers its socket and the web its port, or is named.
  const report = await sup.started(START_WAIT_MS);
  if (sup.stopping) return forever;
  const web = webLine(config, report);
  const notServing = report.notServing.map(
    (q) => `${q.name} (${q.lastExit ? `died: ${q.lastExit}; ${q.status === 'ERROR' ? 'given up' : 'restarting'}` : 'not answering yet'})`,
  );
  log[notServing.length > 0 ? 'warn' : 'info'](
    {
      root: opts.root,
      pid: process.pid,
      queues: report.serving,
      ...(notServing.length > 0 ? { not_serving: notServing } : {}),
      ...web.fields,
      queue_name_max: queueNameRoom(opts.root).maxBytes,
    },
    'rq-mgr started',
  );
  // After the log line has been written: a person's "ready" line comes last.
  const started = { url: web.url, problem: report.web?.problem ?? null, notServing };
  log.flush(() => opts.started?.(started));
  return forever;
}

/** How long the started line waits for queues and the web; a queue still loading past it is named as not serving yet. */
const START_WAIT_MS = 15_000;

/** The web's part of the started line: its URL once it listens, else why not. */
function webLine(config: GlobalConfig, report: StartReport): { url: string | null; fields: Record<string, string> } {
  if (!report.web) return { url: null, fields: { web: 'not built (npm run build)' } };
  const url = webUrl(config);
  if (report.web.ready) return { url, fields: { web: url } };
  const p = report.web.problem;
  return { url: null, fields: { web: p ? `not up: ${p.reason}` : `not up yet (${report.web.status})` } };
}

/** Before any daemon starts: out of a delegated cgroup into its leaf, so the queues may limit their runs through cgroup v2 (said in one line). */
function moveToLeaf(log: Logger): void {
  try {
    const moved = leaveForLeaf();
    if (moved) log.info({ cgroup: moved.leaf, delegation: moved.mark }, "moved into a leaf of rq-mgr's delegated cgroup: its controllers can limit runs");
  } catch (err) {
    log.warn({ err: (err as Error).message }, "could not move into a leaf of rq-mgr's cgroup: runs cannot be limited through cgroup v2");
  }
}
