// How this root's full message ids begin (host, port, relative_root of config/config.json), for the ids rq prints and the examples its refusals give.
import fs from 'node:fs';
import { RqError } from '../errors.js';
import { rootPaths } from '../config/paths.js';
import { type HostInfo, fullId, normaliseRelativeRoot } from '../message/message-id.js';

/** config/config.json as JSON, without the schema; empty when it cannot be read. */
function rawConfig(root: string): Record<string, unknown> {
  let c: unknown;
  try {
    c = JSON.parse(fs.readFileSync(rootPaths(root).configFile, 'utf8'));
  } catch {
    c = null;
  }
  return (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
}

/** Whether config/config.json names a fleet for this root's host to join. */
export function namesFleet(root: string): boolean {
  const fleet = rawConfig(root).fleet;
  return typeof fleet === 'object' && fleet !== null;
}

/** Read as rq-start reads it, without the schema: only host, port and relative_root matter here. */
export function hostOf(root: string): HostInfo {
  const file = rootPaths(root).configFile;
  const { host, port, relative_root: rel } = rawConfig(root);
  if (typeof host !== 'string' || (typeof port !== 'number' && typeof port !== 'string')) {
    throw RqError.of('RQ_ERR_CONFIG', `cannot read host and port from ${file}, needed for full message ids`);
  }
  return { host, port, root: normaliseRelativeRoot(typeof rel === 'string' ? rel : undefined) };
}

/** An id in the shape sendmesg prints them, for examples. */
export const EXAMPLE_ID = '20261121.1643.46.613.2164022';

/**
 * What `--msg_id` takes, with a full id of this root as the example
 * (`http://127.0.0.1:4455/q/<queue>/…`); without a readable config.json, no host is made up.
 */
export function msgIdExpected(root: string): string {
  let example: string;
  try {
    example = ` such as ${fullId(hostOf(root), '<queue>', EXAMPLE_ID)}`;
  } catch {
    example = ' as sendmesg prints it';
  }
  return `a full message id${example} (or <queue>/<id>, or the id alone)`;
}
