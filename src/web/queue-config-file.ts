// A queue's config.json as the web shows it: read only when it is a regular file of a config's size, its secrets left out.
import fs from 'node:fs/promises';
import { queuePaths } from '../config/paths.js';

/** Keys a config may hold that the web never serves, in any case (`Basic_Auth` as well). */
const SECRET_KEYS = ['basic_auth'];
/** A queue's config.json read at most: a few hundred bytes as written, 1 MiB leaves room for any hand-made one. */
const MAX_CONFIG_BYTES = 1024 * 1024;
/** What an `env_vars` value is served as: the names say what a queue's scripts get, the values often hold tokens (config.json on disk has them). */
const HIDDEN_VALUE = '(hidden)';

const isSecretKey = (k: string) => SECRET_KEYS.includes(k.toLowerCase());

function envVarsOf(config: Record<string, unknown>): Record<string, unknown> | null {
  const env = config.env_vars;
  return typeof env === 'object' && env !== null && !Array.isArray(env) && Object.keys(env).length > 0 ? (env as Record<string, unknown>) : null;
}

/** Whether the config holds anything the web does not serve as it is (a secret key, env_vars values). */
export function hasSecrets(config: Record<string, unknown>): boolean {
  return envVarsOf(config) !== null || Object.keys(config).some(isSecretKey);
}

/** The config as the web serves it: no secret keys, and every env_vars value hidden. */
export function withoutSecrets(config: Record<string, unknown>): Record<string, unknown> {
  const out = Object.fromEntries(Object.entries(config).filter(([k]) => !isSecretKey(k)));
  const env = envVarsOf(config);
  if (env) out.env_vars = Object.fromEntries(Object.keys(env).map((k) => [k, HIDDEN_VALUE]));
  return out;
}

/**
 * The queue's config.json, followed if it is a link (create_queue_link makes one): its real path and the JSON object
 * it holds, or null when it is missing, not a regular file (a link to /dev/zero), over 1 MiB or not a JSON object.
 */
export async function readQueueConfig(root: string, queue: string): Promise<{ real: string; config: Record<string, unknown> } | null> {
  const real = await fs.realpath(queuePaths(root, queue).configFile).catch(() => null);
  if (real === null) return null;
  const st = await fs.stat(real).catch(() => null);
  const text = st?.isFile() && st.size <= MAX_CONFIG_BYTES ? await fs.readFile(real, 'utf8').catch(() => null) : null;
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? { real, config: v as Record<string, unknown> } : null;
  } catch {
    return null;
  }
}
