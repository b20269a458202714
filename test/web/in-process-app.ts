// What a test gives buildApp for a web app in its own process, over a root whose daemons it plays or leaves out; each test overrides what it needs.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { GlobalConfig } from '../../src/config/global-config.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { TimersClient } from '../../src/ipc/timers-client.js';
import { silentLogger } from '../../src/log.js';
import { chartLibFiles } from '../../src/web/chart-lib.js';
import { QueueClients } from '../../src/web/queue-clients.js';
import type { WebDeps } from '../../src/web/web-deps.js';
import { PROJECT } from '../helpers/rq-root.js';

/** Clients that give up after 500 ms (a test's missing daemon fails fast), a test cookie secret, the real static files. */
export function inProcessDeps(root: string, over: Partial<WebDeps> = {}): WebDeps {
  return {
    root,
    config: { host: '127.0.0.1', port: 1 } as GlobalConfig,
    log: silentLogger(),
    queues: new QueueClients({ sockPath: (q) => queuePaths(root, q).sock, timeoutMs: 500 }),
    mgr: new MgrClient(rootPaths(root).mgrSock, 500),
    timers: new TimersClient(rootPaths(root).timersSock, 500),
    uploadDir: root,
    cookieSecret: 'test-secret-test-secret-test-secret',
    publicDir: path.join(PROJECT, 'src', 'web', 'public'),
    ansiUpFile: createRequire(import.meta.url).resolve('ansi_up'),
    chartLib: chartLibFiles(),
    ...over,
  };
}
