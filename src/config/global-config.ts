// Schema and loader of the global config/config.json (spec §1.2).
import fs from 'node:fs/promises';
import { z } from 'zod';
import { normaliseRelativeRoot, type HostInfo } from '../message/message-id.js';
import { configReadError, parseConfigJson, parseWithSchema } from './schema-error.js';

export const PORT_EXPECTED = 'a port number 1-65535 (number or numeric string)';

/** True for 1..65535 given as a JSON number or as a string of digits (rq-install writes both). */
export function isPortValue(v: unknown): v is number | string {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 1 && v <= 65535;
  if (typeof v === 'string' && /^\d{1,5}$/.test(v)) return isPortValue(Number(v));
  return false;
}

const nonEmpty = (what: string) => z.string({ error: what }).min(1, { error: what });

const positiveInt = z.number({ error: 'a positive whole number' }).int({ error: 'a positive whole number' }).positive({ error: 'a positive whole number' });

const days = z.number({ error: 'a whole number of days 1-3650' }).int({ error: 'a whole number of days 1-3650' }).min(1, { error: 'a whole number of days 1-3650' }).max(3650, { error: 'a whole number of days 1-3650' });

export const GlobalConfigSchema = z.looseObject({
  // null is what the classic daemon falls back to when env is absent.
  env: z.string({ error: 'a string such as "development" or "production"' }).nullable().optional(),
  host: nonEmpty('a host name (non-empty string)'),
  port: z.custom<number | string>(isPortValue, { error: PORT_EXPECTED }),
  addr: nonEmpty('a listen address (non-empty string)').optional(),
  tmpdir: nonEmpty('a directory path (non-empty string)').optional(),
  allow_new_queue: z.boolean({ error: 'true or false' }).optional(),
  relative_root: z
    .string({ error: 'a URL path starting with "/"' })
    .refine((s) => s.startsWith('/'), { error: 'a URL path starting with "/"' })
    .optional(),
  basic_auth: z
    .looseObject(
      {
        realm: z.string({ error: 'a realm name (string)' }).optional(),
        users: z.record(z.string(), z.string({ error: 'a password (string)' }), { error: 'an object of user name to password' }),
      },
      { error: 'an object {"realm": ..., "users": {"name": "password"}}' },
    )
    .optional(),
  allowed_ips: z.array(z.string({ error: 'an IP address or prefix (string)' }), { error: 'an array of IP address strings' }).optional(),
  // Where a queue created or relinked over HTTP may take its script and config from (docs/security.md).
  script_dirs: z.array(nonEmpty('a directory path (non-empty string)'), { error: 'an array of directory paths' }).optional(),
  allow_exec_prefix: z.boolean({ error: 'true or false' }).optional(),
  allowed_hosts: z.array(nonEmpty('a host name (non-empty string)'), { error: 'an array of host names' }).optional(),
  max_body_bytes: positiveInt.optional(),
  max_field_bytes: positiveInt.optional(),
  idempotency_window_s: positiveInt.optional(),
  // How long the web waits for a queue's reply before answering 503/202 (web/queue-clients.ts); 10 by default.
  queue_reply_timeout_s: positiveInt.optional(),
  // rq-beyond §B15.2, §B16: how long a queue keeps its daily statistics and their histograms; /metrics without auth.
  stats_history_days: days.optional(),
  histogram_history_days: days.optional(),
  metrics_public: z.boolean({ error: 'true or false' }).optional(),
  // GET /events streams open at once (web/event-hub.ts); 64 by default.
  max_event_streams: positiveInt.optional(),
  max_upload_bytes: z.number({ error: 'a positive whole number of bytes' }).int({ error: 'a positive whole number of bytes' }).positive({ error: 'a positive whole number of bytes' }).optional(),
}, { error: 'a JSON object' });

export type GlobalConfig = z.output<typeof GlobalConfigSchema>;

export function parseGlobalConfig(text: string, fileLabel: string): GlobalConfig {
  return parseWithSchema(GlobalConfigSchema, parseConfigJson(text, fileLabel), fileLabel);
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

/** What full message ids and RQ_HOST are built from. */
export function hostInfo(cfg: GlobalConfig): HostInfo {
  return { host: cfg.host, port: cfg.port, root: normaliseRelativeRoot(cfg.relative_root) };
}
