// The word rq sendmesg adds for a pool dest no host of the fleet takes now: the message is made and waits in relay, which for a mistyped queue is for ever.
import { poolName } from '../message/fleet-dest.js';
import { type FleetView, blindness, takesWork } from '../ipc/fleet-reply.js';
import { askFleet } from './fleet-ask.js';
import type { RqIo } from './rq-command.js';

/**
 * On stderr, when the fleet (as this root's rq-mgr sees it) has no host up with the queue of `dest`, or
 * none with it UP, or when this host has not read the fleet from etcd: the message was made, so this is
 * a note, not a refusal, and the exit stays 0; `prepped`, it waits once committed. Says nothing when
 * rq-mgr cannot be asked: the note is a courtesy, the relay's status says the same once it tries.
 */
export async function notePool(root: string, dest: string, io: RqIo, prepped = false): Promise<void> {
  const queue = poolName(dest);
  if (queue === null) return;
  const view = await askFleet(root).catch(() => null);
  const note = view?.ok ? poolNote(view.value, queue, prepped) : null;
  if (note) io.stderr(note);
}

/** The note for a pool message to `queue` made now, or null when a host takes it. */
export function poolNote(view: FleetView, queue: string, prepped: boolean): string | null {
  const waits = `the message${prepped ? ', once committed,' : ''} waits in the relay queue until`;
  const having = view.hosts.filter((h) => h.state === 'up' && h.queues[queue] !== undefined);
  // A host the last view has taking it is tried, read from etcd or not.
  if (having.some((h) => takesWork(h, queue))) return null;
  const blind = blindness(view);
  if (blind) return `rq: fleet ${view.fleet} could not be read from etcd (${blind}): ${waits} it can be and a host has queue ${queue} UP`;
  if (having.length === 0) return `rq: no host of fleet ${view.fleet} has queue ${queue} now: ${waits} one does (rq queues --fleet lists the fleet's queues)`;
  return `rq: no host of fleet ${view.fleet} has queue ${queue} UP now (${having.map((h) => `${h.host} ${h.queues[queue].status}`).join(', ')}): ${waits} one is`;
}
