// The web process (started by rq-mgr): `node dist/web/web-main.js --root <root> [--watch-stdin]`; logs JSON to stdout.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadGlobalConfig, webUrl } from '../config/global-config.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import { PACKAGE_DIR, resolveRoot } from '../config/root.js';
import { createLogger } from '../log.js';
import { daemonMain, heartbeatParent, tellParent, untilStopped } from '../daemon.js';
import { listenProblem } from './listen-problem.js';
import { buildApp } from './app.js';
import { chartLibFiles } from './chart-lib.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { TimersClient } from '../ipc/timers-client.js';
import { QueueClients } from './queue-clients.js';
import { chooseUploadDir } from './upload-dir.js';

async function main(): Promise<number | void> {
  const { values } = parseArgs({ options: { root: { type: 'string' }, 'watch-stdin': { type: 'boolean', default: false } }, strict: true });
  const root = resolveRoot(values.root);
  const paths = rootPaths(root);
  const log = createLogger({ name: 'rq-web', fd: 1, terminalLevel: 'warn' });
  process.title = '[rq-web]';
  let config;
  try {
    config = await loadGlobalConfig(paths.configFile);
  } catch (err) {
    log.error({ err: (err as Error).message }, 'Bad config file. Exiting');
    return 1;
  }
  const queues = new QueueClients({ sockPath: (q) => queuePaths(root, q).sock, timeoutMs: (config.queue_reply_timeout_s ?? 10) * 1000 });
  const app = await buildApp({
    root,
    config,
    log,
    queues,
    mgr: new MgrClient(paths.mgrSock),
    timers: new TimersClient(paths.timersSock),
    uploadDir: await chooseUploadDir(paths.queues, config.tmpdir, log),
    cookieSecret: randomBytes(32).toString('hex'),
    publicDir: path.join(PACKAGE_DIR, 'src', 'web', 'public'),
    ansiUpFile: createRequire(import.meta.url).resolve('ansi_up'),
    chartLib: chartLibFiles(),
  });
  const host = config.addr ?? '127.0.0.1';
  const port = Number(config.port);
  try {
    await app.listen({ host, port });
  } catch (err) {
    // rq-mgr says it once, with the fix, and tries again with back-off; alone, this is the one line.
    const problem = listenProblem(err as NodeJS.ErrnoException, host, port, root);
    if (process.send) await tellParent(problem);
    const level = process.send ? 'debug' : 'error';
    log[level]({ host, port, err: (err as Error).message }, `${problem.reason}; ${problem.fix}`);
    return 1;
  }
  log.info({ host, port, root, relative_root: config.relative_root ?? '/' }, 'web server listening');
  await tellParent({ rq: 'ready', url: webUrl(config) });
  // A web whose loop is stuck would be taken as serving: rq-mgr restarts it when these stop.
  heartbeatParent();

  untilStopped({
    log,
    watchStdin: values['watch-stdin'],
    onStop: async () => {
      await app.rqCloseGracefully().catch((err) => log.warn({ err: (err as Error).message }, 'close failed'));
      queues.close();
    },
  });
}

daemonMain('rq-web', main);
