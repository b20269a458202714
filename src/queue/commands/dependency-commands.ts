// The queue socket's dependency commands (rq-beyond §B8): add_dependent and dependency_resolved between queues, undepend for operators.
import { RqError, invalidField } from '../../errors.js';
import { readDepends } from '../../message/depends.js';
import { isUrlRef } from '../../message/fleet-ref.js';
import { parseFullId } from '../../message/message-id.js';
import { isMsgId, isValidQueueName } from '../../message/names.js';
import { type Args, MAX_ACTOR, flag, msgId, optionalText } from './command-args.js';
import type { Queue } from '../queue.js';

/** Commands of this file answered while the queue is DOWN: queues talking to each other. */
export const DEPENDENCY_INTERNAL = ['add_dependent', 'dependency_resolved'];

/** A `<queue>/<id>` ref of this host, or the full id of another fleet host's message (the web checked it against the fleet), in `field`. */
function refArg(args: Args, field: string): string {
  const v = args[field];
  if (typeof v === 'string' && isUrlRef(v)) {
    const p = parseFullId(v);
    if (p && isValidQueueName(p.queue) && isMsgId(p.id)) return v;
  }
  const slash = typeof v === 'string' ? v.indexOf('/') : -1;
  if (typeof v !== 'string' || !isValidQueueName(v.slice(0, slash)) || !isMsgId(v.slice(slash + 1)))
    throw invalidField(field, 'a message ref <queue>/<msg_id> or a full id of another host of the fleet', v);
  return v;
}

export const DEPENDENCY_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  add_dependent: async (q, args) => ['ok', await q.outbox.addDependent(msgId(args), refArg(args, 'dependent'))],

  dependency_resolved: async (q, args) => {
    const state = args.state;
    if (typeof state !== 'string') throw invalidField('state', 'a state', state);
    const outcome = typeof args.outcome === 'string' ? args.outcome : undefined;
    return ['ok', await q.waits.resolve(msgId(args), refArg(args, 'dependency'), state, outcome)];
  },

  undepend: async (q, args) => {
    const id = msgId(args);
    const all = flag(args, 'all');
    const given = args.depends !== undefined && args.depends !== null && args.depends !== '';
    if (all === given) throw RqError.of('RQ_ERR_USAGE', 'give depends or all, not both and not neither');
    const refs = all ? null : readDepends(args.depends, q.waits.refContext);
    if (!(await q.ops.locate(id))) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
    return ['ok', await q.waits.undepend(id, refs, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },
};
