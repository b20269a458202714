// What a queue process is made from: its root, config, host, launcher and the knobs tests turn; passed in whole, so nothing in the queue reaches for a global.
import type { Logger } from 'pino';
import type { QueueConfig } from '../config/queue-config.js';
import type { HostInfo } from '../message/message-id.js';
import type { SpoolFs } from '../spool/spool-fs.js';
import type { Peer } from './lifecycle/dup.js';
import type { Launcher, ScriptCheck } from './launch/script-runner.js';
import type { StatsRetention } from './observers/queue-stats.js';
import type { Tracing } from './observers/otlp-tracing.js';

export interface QueueDeps {
  root: string;
  config: QueueConfig;
  host: HostInfo;
  /**
   * config.json names a fleet: this host's advertised URL (no trailing slash). A create may then carry a
   * `fleet:<queue>` dest (message/fleet-dest.ts) and depend on messages of the fleet's other hosts.
   */
  fleetUrl?: string;
  log: Logger;
  peer: Peer;
  /** How scripts are started (chooseLauncher picks the native spawner or the child_process gate). */
  launch: Launcher;
  now?: () => number;
  /** The environment scripts inherit (spec §4.4 adds to it): a plain object, not process.env. */
  baseEnv: NodeJS.ProcessEnv;
  scriptOutside?: ScriptCheck;
  /** Grace between TERM and KILL when stopping scripts (KILL_GRACE_MS by default). */
  killGraceMs?: number;
  /** How long an idempotency key answers its first message (idempotency_window_s; 24 h by default). */
  idempotencyWindowMs?: number;
  /** stats_history_days and histogram_history_days (rq-beyond §B15.2); 30 and 7 by default. */
  statsRetention?: StatsRetention;
  /** The OpenTelemetry SDK, started when spans are exported (config/otlp-endpoint.ts); absent, the queue loads none of it. */
  tracing?: Tracing;
  /** The spool's disk calls (the real disk by default; tests record them to check durability). */
  fs?: SpoolFs;
}

export const DEFAULT_IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
