// A pool destination, `fleet:<queue>`: the queue of that name on whichever host of this host's fleet can take the message (docs/fleet.md, Pools).
import { invalidField } from '../errors.js';
import { queueNameProblem } from './names.js';

const PREFIX = 'fleet:';

/** The relay queue carries pool messages, as it carries http dests: a pool of relays would only relay again. */
export const RELAY_QUEUE = 'relay';

export function isFleetDest(dest: unknown): dest is string {
  return typeof dest === 'string' && dest.startsWith(PREFIX);
}

/** The queue part of a pool dest, unchecked (a stored dest was checked at its create), or null for any other dest. */
export function poolName(dest: string): string | null {
  return isFleetDest(dest) ? dest.slice(PREFIX.length) : null;
}

/** The queue a `fleet:<queue>` dest names, checked as a queue name; the refusal names `dest`. */
export function poolQueue(dest: string): string {
  const queue = dest.slice(PREFIX.length);
  const problem = queueNameProblem(queue);
  // The name's own problem is part of what was expected; received is the dest as sent, whole.
  if (problem) throw invalidField('dest', `fleet:<queue> with a valid queue name (${problem})`, dest);
  if (queue === RELAY_QUEUE) throw invalidField('dest', 'fleet:<queue> naming a queue other than relay (the relay carries pool messages itself)', dest);
  return queue;
}

/**
 * Whether a create may carry this dest here: a pool dest only on a host in a fleet (there is no
 * other host to choose otherwise), and only in the relay queue, whose script does the choosing.
 */
export function checkFleetDest(dest: string, here: { inFleet: boolean; queue: string }): void {
  if (!isFleetDest(dest)) return;
  poolQueue(dest);
  if (!here.inFleet) throw invalidField('dest', 'a queue name or an http(s) URL (fleet:<queue> needs this host in a fleet; config.json names none)', dest);
  if (here.queue !== RELAY_QUEUE) throw invalidField('dest', `fleet:<queue> only in the relay queue, which delivers it (created in ${here.queue})`, dest);
}
