// The word rq sendmesg adds for a pool dest no host of the fleet takes now: the message is made and waits in relay, which for a mistyped queue is for ever.
import { poolName } from '../message/fleet-dest.js';
import { takesWork } from '../ipc/fleet-reply.js';
import { askFleet } from './fleet-ask.js';
import type { RqIo } from './rq-command.js';

/**
 * On stderr, when the fleet (as this root's rq-mgr sees it, etcd answering) has no host up with the
 * queue of `dest`, or none with it UP: the message was made, so this is a note, not a refusal, and
 * the exit stays 0; `prepped`, it waits once committed. Says nothing when the fleet cannot be asked: the note is a courtesy, the relay's
 * status says the same once it tries.
 */
export async function notePool(root: string, dest: string, io: RqIo, prepped = false): Promise<void> {
  const queue = poolName(dest);
  if (queue === null) return;
  const view = await askFleet(root).catch(() => null);
  if (!view?.ok || !view.value.etcd.reachable) return;
  const { fleet, hosts } = view.value;
  const having = hosts.filter((h) => h.state === 'up' && h.queues[queue] !== undefined);
  if (having.some((h) => takesWork(h, queue))) return;
  const until = `the message${prepped ? ', once committed,' : ''} waits in the relay queue until one`;
  if (having.length === 0) io.stderr(`rq: no host of fleet ${fleet} has queue ${queue} now: ${until} does (rq queues --fleet lists the fleet's queues)`);
  else
    io.stderr(`rq: no host of fleet ${fleet} has queue ${queue} UP now (${having.map((h) => `${h.host} ${h.queues[queue].status}`).join(', ')}): ${until} is`);
}
