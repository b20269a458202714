// Which message a command names (`--msg_id` or its word): a full id, `<queue>/<id>`, or the id alone, whose queue is found by asking every queue of the root.
import { RqError, shown } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { fleetRefOf, isUrlRef } from '../message/fleet-ref.js';
import { hostUrl, parseFullId } from '../message/message-id.js';
import { rootPaths } from '../config/paths.js';
import { MgrClient } from '../ipc/mgr-client.js';
import { isMsgId, queueNameProblem } from '../message/names.js';
import { askEvery } from './fan-out.js';
import { hostOf, msgIdExpected, namesFleet } from './root-host.js';
import { type Options, stringOpt, usage } from './rq-options.js';

export interface MessageTarget {
  /** The id as given on the command line: classic output lines echo it. */
  given: string;
  queue: string;
  id: string;
}

/** How long a full id's host is asked of rq-mgr's view of the fleet. */
const FLEET_ASK_MS = 2000;

/** The queues a refusal lists by name before it says how many more. */
const NAMED = 10;

const listed = (names: readonly string[]) => (names.length > NAMED ? `${names.slice(0, NAMED).join(', ')} and ${names.length - NAMED} more` : names.join(', '));

/**
 * Whether a queue holds the message: true, false for `msg not found`, or its refusal. get_history
 * stands in where a DOWN queue refuses get_message_state: it is answered in every admin state.
 */
async function holds(c: QueueClient, id: string): Promise<Answer<boolean>> {
  let a: Answer<unknown> = await c.state(id);
  if (!a.ok && a.code === 'RQ_ERR_QUEUE_DOWN') a = await c.history(id);
  if (a.ok) return { ok: true, value: true, raw: a.raw };
  return a.code === 'RQ_ERR_NO_SUCH_MSG' ? { ok: true, value: false, raw: a.raw } : a;
}

/**
 * The queue holding message `id`, asking every queue of the root: one holds it, that one; several,
 * refused naming them (exit 2); none, RQ_ERR_MSG_IN_NO_QUEUE (exit 6), or RQ_ERR_NO_REPLY naming the
 * queues that could not be asked when some could not; rq-mgr down, its one line (fan-out.ts).
 */
export async function queueHolding(root: string, id: string): Promise<string> {
  const every = await askEvery(root, (c) => holds(c, id));
  const holders = every.answers.filter((a) => a.value).map((a) => a.queue);
  if (holders.length === 1) return holders[0];
  if (holders.length > 1) {
    throw usage(
      `--msg_id: expected the id of a message in one queue, received ${shown(id)}, which is in ${holders.length} queues (${listed(holders)}): name one as <queue>/<id>, such as ${holders[0]}/${id}`,
    );
  }
  if (every.failures.length > 0) {
    const answered = every.answers.map((a) => a.queue);
    const silent = every.failures.map((f) => f.queue);
    throw RqError.of(
      'RQ_ERR_NO_REPLY',
      `message ${id} is in none of the queues that answered (${answered.length ? listed(answered) : 'none'}); these did not: ${listed(silent)} (${every.problems[0]})`,
    );
  }
  throw RqError.of('RQ_ERR_MSG_IN_NO_QUEUE', id, every.asked.length ? `${every.asked.length}: ${listed(every.asked)}` : 'none: the root has no queues');
}

/**
 * `--msg_id` (or the command's `<msg_id>` word): a FULLID (the host part is ignored, as classic, unless it is
 * another host's of this root's fleet: refused, naming that host), a
 * `/q/<q>/<id>` path, `<q>/<id>`, or an id alone, looked up in every queue. A malformed one is
 * refused with an example full id of this root (its own host and port).
 */
export async function messageTarget(opts: Options, root: string): Promise<MessageTarget> {
  const given = stringOpt(opts, 'msg_id', msgIdExpected(root));
  if (given === undefined) throw usage(`--msg_id: expected ${msgIdExpected(root)}, received nothing`);
  if (isMsgId(given)) return { given, queue: await queueHolding(root, given), id: given };
  const bare = /^([^/]+)\/([^/]+)$/.exec(given);
  const parts = parseFullId(given) ?? (bare ? { queue: bare[1], id: bare[2] } : null);
  if (!parts || queueNameProblem(parts.queue) !== null || !isMsgId(parts.id)) {
    throw usage(`--msg_id: expected ${msgIdExpected(root)}, received ${shown(given)}`);
  }
  const far = isUrlRef(given) && namesFleet(root) && !ownId(root, given) ? await otherFleetHost(root, given) : null;
  if (far) {
    throw usage(
      `--msg_id: expected a message of this root, received ${shown(given)}, a message of host ${far.host} of fleet ${far.fleet}: ask it there (its root's rq, or its web at ${far.url})`,
    );
  }
  return { given, ...parts };
}

/** Whether a full id begins as this root's own do (config.json's host, port and relative_root). */
function ownId(root: string, given: string): boolean {
  try {
    return given.startsWith(hostUrl(hostOf(root)));
  } catch {
    return false;
  }
}

/**
 * The other host of this root's fleet whose advertised URL a full id is under, as rq-mgr sees the fleet; null
 * without a fleet or an answer. The host part of a full id is otherwise ignored, as classic: only a URL another
 * host of the fleet advertises says for certain that the message is not here.
 */
async function otherFleetHost(root: string, given: string): Promise<{ host: string; fleet: string; url: string } | null> {
  // Briefly: a command is not held up by an rq-mgr that does not answer, only the hint is lost.
  const view = await new MgrClient(rootPaths(root).mgrSock).fleet(FLEET_ASK_MS).catch(() => null);
  if (!view?.ok) return null;
  // Up only: a host gone may have left its URL to this one (a host renamed, a machine replaced).
  const others = view.value.hosts.filter((h) => h.state === 'up' && h.host !== view.value.host);
  const far = fleetRefOf(given, others);
  return far ? { host: far.host, fleet: view.value.fleet, url: others.find((h) => h.host === far.host)!.url } : null;
}
