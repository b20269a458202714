// Where a relayed message goes, from its dest: the far host's base URL (its relative_root included) and queue; checked at create in the relay queue, parsed again by the relay at the run.
import { RqError, invalidField, shown } from '../errors.js';
import { queueNameProblem } from './names.js';

export interface RelayTarget {
  /** Everything before `/q/<name>`: scheme, host, port and the far host's relative_root, no trailing slash. */
  base: string;
  queue: string;
}

const EXPECTED = 'an http(s)://host[:port][/root]/q/<queue> URL';

/**
 * Parses the destination URL. The base is everything before the first `/q/<name>` of the path,
 * so a far host served under a relative_root (`http://h/therq/q/test`) is reached at that root
 * (spec §16.16: the classic relay dropped it).
 */
export function relayTarget(dest: string): RelayTarget {
  let url: URL;
  try {
    url = new URL(dest);
  } catch {
    throw invalidField('dest', EXPECTED, dest);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalidField('dest', EXPECTED, dest);
  const m = /^(.*?)\/q\/([^/]+)/.exec(url.pathname);
  if (!m) throw RqError.of('RQ_ERR_INVALID_FIELD', 'dest', EXPECTED, `${shown(dest)} (no /q/<queue> in the path)`);
  let queue: string;
  try {
    queue = decodeURIComponent(m[2]);
  } catch {
    throw RqError.of('RQ_ERR_INVALID_FIELD', 'dest', EXPECTED, `${shown(dest)} (bad %-escape in the queue name)`);
  }
  const problem = queueNameProblem(queue);
  if (problem) throw RqError.of('RQ_ERR_INVALID_QUEUE_NAME', `dest: ${problem}`);
  return { base: `${url.origin}${m[1].replace(/\/+$/, '')}`, queue };
}

/** `<base>/q/<queue>`: the queue's URL on the far host. */
export function queueUrl(base: string, queue: string): string {
  return `${base}/q/${encodeURIComponent(queue)}`;
}

/** `<base>/q/<queue>/<id>`: a message's URL on the far host. */
export function messageUrl(base: string, queue: string, id: string): string {
  return `${queueUrl(base, queue)}/${encodeURIComponent(id)}`;
}
