// What the web app is built from: everything passed in, so tests can build it against any root.
import type { Logger } from 'pino';
import type { GlobalConfig } from '../config/global-config.js';
import type { MgrClient } from '../ipc/mgr-client.js';
import type { TimersClient } from '../ipc/timers-client.js';
import type { ChartLibFiles } from './chart-lib.js';
import type { QueueClients } from './queue-clients.js';

export interface WebDeps {
  root: string;
  config: GlobalConfig;
  log: Logger;
  queues: QueueClients;
  mgr: MgrClient;
  timers: TimersClient;
  /** Where uploads are written before the queue hard-links them (same filesystem as queues/). */
  uploadDir: string;
  /** Signs the flash cookie. */
  cookieSecret: string;
  /** Static assets (css/, js/, favicon). */
  publicDir: string;
  /** The ansi_up ES module served as /js/ansi_up.js. */
  ansiUpFile: string;
  /** uPlot, served as /js/uPlot.esm.js and /css/uPlot.min.css for the stats page's charts. */
  chartLib: ChartLibFiles;
  now?: () => number;
}

/** Default upload limit when config.json has no max_upload_bytes: 2 GiB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 2 * 1024 ** 3;
