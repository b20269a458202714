// Schema and loader of the global config/config.json (spec §1.2).
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
// zod/mini: the same checks, tree-shaken; the full zod cost every daemon ~9 MB of RSS (bench/rss.ts).
import * as z from 'zod/mini';
import { normaliseRelativeRoot, type HostInfo } from '../message/message-id.js';
import { configReadError, parseConfigJson, parseWithSchema } from './schema-error.js';
import { OTLP_ENDPOINT_EXPECTED, isOtlpEndpoint } from './otlp-endpoint.js';
import { FleetConfigSchema } from './fleet-config.js';
import { refuseMisspeltKeys } from './misspelt-keys.js';

export const PORT_EXPECTED = 'a port number 1-65535 (number or numeric string)';

/** True for 1..65535 given as a JSON number or as a string of digits (rq-install writes both). */
export function isPortValue(v: unknown): v is number | string {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 1 && v <= 65535;
  if (typeof v === 'string' && /^\d{1,5}$/.test(v)) return isPortValue(Number(v));
  return false;
}

const nonEmpty = (what: string) => z.string({ error: what }).check(z.minLength(1, { error: what }));

export const ADDR_EXPECTED = 'a listen address: an IP address such as 127.0.0.1, 0.0.0.0 or ::, or a host name';

/**
 * An address the web could listen on: an IP address, or a host name (resolved at listen). What only
 * looks like an IPv4 address (`999.1.1.1`, `10.0.0`) is neither, and would stop the web at start.
 */
export function isListenAddr(v: string): boolean {
  if (isIP(v) !== 0) return true;
  if (/^[\d.]+$/.test(v)) return false;
  return /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v);
}

const positiveInt = z.int({ error: 'a positive whole number' }).check(z.positive({ error: 'a positive whole number' }));

const days = z
  .int({ error: 'a whole number of days 1-3650' })
  .check(z.minimum(1, { error: 'a whole number of days 1-3650' }), z.maximum(3650, { error: 'a whole number of days 1-3650' }));

export const GlobalConfigSchema = z.looseObject(
  {
    // null is what the classic daemon falls back to when env is absent.
    env: z.optional(z.nullable(z.string({ error: 'a string such as "development" or "production"' }))),
    host: nonEmpty('a host name (non-empty string)'),
    port: z.custom<number | string>(isPortValue, { error: PORT_EXPECTED }),
    addr: z.optional(z.string({ error: ADDR_EXPECTED }).check(z.refine(isListenAddr, { error: ADDR_EXPECTED }))),
    tmpdir: z.optional(nonEmpty('a directory path (non-empty string)')),
    allow_new_queue: z.optional(z.boolean({ error: 'true or false' })),
    relative_root: z.optional(
      z.string({ error: 'a URL path starting with "/"' }).check(z.refine((s) => s.startsWith('/'), { error: 'a URL path starting with "/"' })),
    ),
    basic_auth: z.optional(
      z.looseObject(
        {
          realm: z.optional(z.string({ error: 'a realm name (string)' })),
          users: z.record(z.string(), z.string({ error: 'a password (string)' }), { error: 'an object of user name to password' }),
        },
        { error: 'an object {"realm": ..., "users": {"name": "password"}}' },
      ),
    ),
    allowed_ips: z.optional(z.array(z.string({ error: 'an IP address or prefix (string)' }), { error: 'an array of IP address strings' })),
    // Where a queue created or relinked over HTTP may take its script and config from (docs/security.md).
    script_dirs: z.optional(z.array(nonEmpty('a directory path (non-empty string)'), { error: 'an array of directory paths' })),
    allow_exec_prefix: z.optional(z.boolean({ error: 'true or false' })),
    allowed_hosts: z.optional(z.array(nonEmpty('a host name (non-empty string)'), { error: 'an array of host names' })),
    max_body_bytes: z.optional(positiveInt),
    max_field_bytes: z.optional(positiveInt),
    idempotency_window_s: z.optional(positiveInt),
    // How long the web waits for a queue's reply before answering 503/202 (web/queue-clients.ts); 10 by default.
    queue_reply_timeout_s: z.optional(positiveInt),
    // rq-beyond §B15.2, §B16: how long a queue keeps its daily statistics and their histograms; /metrics without auth.
    stats_history_days: z.optional(days),
    histogram_history_days: z.optional(days),
    metrics_public: z.optional(z.boolean({ error: 'true or false' })),
    // GET /events streams open at once (web/event-hub.ts); 64 by default.
    max_event_streams: z.optional(positiveInt),
    // Bounds on the web's connections (web/connection-limits.ts, docs/http-api.md "Connection limits"); defaults in web/web-limits.ts.
    max_connections: z.optional(positiveInt),
    max_connections_per_address: z.optional(positiveInt),
    max_sse_streams: z.optional(positiveInt),
    max_tails_per_message: z.optional(positiveInt),
    headers_timeout_s: z.optional(positiveInt),
    keep_alive_timeout_s: z.optional(positiveInt),
    shutdown_grace_s: z.optional(positiveInt),
    // Connections at once on a queue's, rq-mgr's or the timers' socket (ipc/socket-server.ts); 512 by default.
    max_socket_connections: z.optional(positiveInt),
    // Queue statuses /healthz counts as healthy (any text a queue reports); UP, PAUSE and an operator's DOWN by default (web/health.ts).
    healthy_states: z.optional(
      z.array(nonEmpty('a queue status such as "UP" (non-empty string)'), { error: 'an array of queue statuses such as ["UP", "PAUSE"]' }),
    ),
    // How queue processes trade CPU for memory (queue/node-flags.ts queueNodeFlags); read when rq-mgr starts.
    queue_memory: z.optional(z.enum(['default', 'lean'], { error: '"default" or "lean"' })),
    // Where queue processes send their spans, OTLP over HTTP (config/otlp-endpoint.ts); false: nowhere, whatever OTEL_* says.
    otlp_endpoint: z.optional(z.custom<string | false>((v) => v === false || isOtlpEndpoint(v), { error: OTLP_ENDPOINT_EXPECTED })),
    max_upload_bytes: z.optional(z.int({ error: 'a positive whole number of bytes' }).check(z.positive({ error: 'a positive whole number of bytes' }))),
    // Membership of a fleet of hosts coordinated through etcd (docs/fleet.md); absent, nothing of it loads.
    fleet: z.optional(FleetConfigSchema),
  },
  { error: 'a JSON object' },
);

export type GlobalConfig = z.output<typeof GlobalConfigSchema>;

export function parseGlobalConfig(text: string, fileLabel: string): GlobalConfig {
  return checkGlobalConfig(parseConfigJson(text, fileLabel), fileLabel);
}

const SETTINGS = Object.keys(GlobalConfigSchema.def.shape);
const FLEET_SETTINGS = Object.keys(FleetConfigSchema.def.shape);

/** The passwords config.json may hold, or hold by mistake: a refusal names their field but never shows them. */
const isSecretPath = (path: readonly PropertyKey[]): boolean =>
  (path[0] === 'basic_auth' && path[1] === 'users' && path.length === 3) || (path[0] === 'fleet' && path[1] === 'etcd_password');

/** `input` checked as a config.json: a misspelt key named (the schema would drop it), then every value. */
export function checkGlobalConfig(input: unknown, fileLabel: string): GlobalConfig {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
    // `users` or `realm` at the top: basic_auth meant, and the web would be open without it.
    refuseMisspeltKeys(input, SETTINGS, fileLabel, { inside: { basic_auth: ['users', 'realm'] } });
    const fleet: unknown = (input as { fleet?: unknown }).fleet;
    // The fleet block is rq's own, with no classic keys to pass over: any key it does not take is refused.
    if (typeof fleet === 'object' && fleet !== null && !Array.isArray(fleet))
      refuseMisspeltKeys(fleet, FLEET_SETTINGS, fileLabel, { prefix: 'fleet.', strict: FLEET_SETTINGS.filter((k) => k !== 'etcd_password') });
  }
  return parseWithSchema(GlobalConfigSchema, input, fileLabel, isSecretPath);
}

/** Reads and validates config.json; `fileLabel` is how errors name it (default: the path). */
export async function loadGlobalConfig(file: string, fileLabel: string = file): Promise<GlobalConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw configReadError(fileLabel, err);
  }
  return parseGlobalConfig(text, fileLabel);
}

/** Where a person opens the web UI: the address it listens on (loopback unless `addr`; an IPv6 one in brackets), its port and relative_root. */
export function webUrl(cfg: Pick<GlobalConfig, 'addr' | 'port' | 'relative_root'>): string {
  const addr = cfg.addr ?? '127.0.0.1';
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${cfg.port}${cfg.relative_root ?? '/'}`;
}

/** What full message ids and RQ_HOST are built from. */
export function hostInfo(cfg: GlobalConfig): HostInfo {
  return { host: cfg.host, port: cfg.port, root: normaliseRelativeRoot(cfg.relative_root) };
}
