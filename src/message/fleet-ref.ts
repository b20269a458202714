// A message of another fleet host named by its full id, as a dependency or a dependent: read against the hosts' advertised URLs, in the one spelling both hosts use.
import { parseFullId } from './message-id.js';
import { isMsgId, isValidQueueName } from './names.js';

/** A ref given as a URL (a full id), where one of this host is `<queue>/<id>`. */
export const isUrlRef = (ref: string): boolean => /^https?:\/\//i.test(ref);

export interface FleetRef {
  /** The fleet host the message is on. */
  host: string;
  /** `<advertised url>/q/<queue>/<id>`: how that host names the message in its own notifications. */
  ref: string;
}

/**
 * The host of `hosts` whose advertised URL `text` names a message of, and the ref in its one
 * spelling; null when `text` is no full id under any of them. Only these URLs are ever asked: a
 * ref cannot make a host send requests anywhere but to another host of its fleet.
 */
export function fleetRefOf(text: string, hosts: readonly { host: string; url: string }[]): FleetRef | null {
  const p = parseFullId(text);
  if (!p || !isValidQueueName(p.queue) || !isMsgId(p.id, false)) return null;
  const tail = `/q/${p.queue}/${p.id}`;
  for (const h of hosts) {
    const base = h.url.replace(/\/+$/, '');
    if (text === `${base}${tail}` || text === `${base}${tail}/`) return { host: h.host, ref: `${base}${tail}` };
  }
  return null;
}
