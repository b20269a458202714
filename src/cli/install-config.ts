// What rq-install writes where a config/config.json is already: the existing settings kept, the options given on top.
import fs from 'node:fs/promises';
import { RqError, isErrno, shown } from '../errors.js';
import { parseConfigJson } from '../config/schema-error.js';

export interface ForcedConfig<T> {
  config: T;
  /** The existing keys no option changed, in the file's order; a block's kept fields as `<block>.<field>`. */
  kept: string[];
  /** The existing blocks (objects, such as `fleet`) options changed fields of, the others kept. */
  merged: string[];
}

/**
 * `--force` over an existing config changes only what its options set: a port moved with
 * `--port N --force` (what rq-mgr says to do when the port is taken) keeps basic_auth, env and every
 * other key, and a block's option (`fleet`'s `--fleet-host`) changes that field of the block alone. Without a file, `defaults` (which hold `given`) are written. A file that is no JSON
 * object is refused (RQ_ERR_CONFIG, naming its fault): writing the defaults over it would drop what it
 * holds, basic_auth among it, and leave the web open.
 */
export async function forcedConfig<T extends object>(file: string, defaults: T, given: Partial<T>): Promise<ForcedConfig<T>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return { config: defaults, kept: [], merged: [] };
    throw err;
  }
  const before = parseConfigJson(text, 'config/config.json');
  if (typeof before !== 'object' || before === null || Array.isArray(before))
    throw RqError.of('RQ_ERR_CONFIG', `config/config.json: expected a JSON object, received ${shown(before)}`);
  // A block's option changes its field: --fleet-host keeps the fleet's etcd, TLS files and lease_ttl_s.
  const old = before as Record<string, unknown>;
  const merged = Object.keys(given).filter((k) => isBlock(old[k]) && isBlock(given[k as keyof T]));
  const blocks = Object.fromEntries(merged.map((k) => [k, { ...(old[k] as object), ...(given[k as keyof T] as object) }]));
  const kept = Object.keys(before).flatMap((k) => {
    if (!(k in given)) return [k];
    const fields = merged.includes(k) ? Object.keys(old[k] as object).filter((f) => !(f in (given[k as keyof T] as object))) : [];
    return fields.map((f) => `${k}.${f}`);
  });
  return { config: { ...defaults, ...before, ...given, ...blocks }, kept, merged };
}

function isBlock(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
