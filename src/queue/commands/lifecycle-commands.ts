// The queue socket's lifecycle commands (rq-beyond §B1.8): cancel, requeue (one or all errs), reschedule, priority, history, running and waiting.
import { RqError, invalidField } from '../../errors.js';
import { queueNameProblem } from '../../message/names.js';
import { MAX_EPOCH_SECONDS, epochSeconds, numberOf, readJobFields } from '../../message/job-fields.js';
import { OUTCOMES } from '../../message/message.js';
import { partialReply } from '../../ipc/partial-reply.js';
import { WAIT_REASONS, type WaitReason } from '../../ipc/run-lists.js';
import { type Args, MAX_ACTOR, MAX_REASON, countArg, flag, msgId, oneOf, optionalText } from './command-args.js';
import { waitFinished } from '../lifecycle/finish-wait.js';
import { runningList, waitingList } from '../observers/queue-listings.js';
import { groupArg } from './stats-commands.js';
import type { Queue } from '../queue.js';

/** Commands answered while the queue is DOWN (read-only), once the recovery scan is done. */
export const ANSWERED_WHEN_DOWN = new Set(['get_history', 'running', 'waiting', 'wait_message']);

/** `due` (epoch seconds) or `delay` (seconds from now), not both; undefined for "now". */
function dueOf(args: Args, nowMs: number): number | undefined {
  const given = (f: string) => args[f] !== undefined && args[f] !== null && args[f] !== '';
  if (given('due') && given('delay')) throw RqError.of('RQ_ERR_USAGE', 'give due or delay, not both');
  if (given('due')) return epochSeconds('due', args.due, invalidField);
  if (given('delay')) {
    const delay = numberOf(args.delay);
    const due = Math.round(nowMs + delay * 1000) / 1000;
    if (!Number.isFinite(due) || delay < 0 || due > MAX_EPOCH_SECONDS)
      throw invalidField('delay', `seconds >= 0, ending by ${MAX_EPOCH_SECONDS} (the end of year 9999)`, args.delay);
    return due;
  }
  return undefined;
}

const MAX_LISTED = 10_000;
const MAX_REQUEUED = 1_000_000;

async function located(q: Queue, id: string) {
  const where = await q.ops.locate(id);
  if (!where) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
  return where;
}

export const LIFECYCLE_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  cancel_message: async (q, args) => {
    const id = msgId(args);
    const req = { reason: optionalText(args, 'reason', MAX_REASON), actor: optionalText(args, 'actor', MAX_ACTOR), purge: flag(args, 'purge') };
    const done = await q.lifecycle.cancel(id, await located(q, id), req);
    return ['ok', done === 'cancelled' ? 'msg cancelled' : 'msg cancelling'];
  },

  requeue_message: async (q, args) => {
    const id = msgId(args);
    const opts = { reset: flag(args, 'reset'), due: dueOf(args, q.now()), actor: optionalText(args, 'actor', MAX_ACTOR) };
    await q.lifecycle.requeue(id, await q.ops.locate(id), opts);
    return ['ok', 'msg requeued'];
  },

  requeue_errs: async (q, args) => {
    const group = groupArg(args);
    const only = group === undefined ? undefined : await q.stats.groups.ids(group);
    const sel = {
      outcome: oneOf(args, 'outcome', OUTCOMES),
      limit: countArg(args, 'limit', MAX_REQUEUED),
      actor: optionalText(args, 'actor', MAX_ACTOR),
      only,
    };
    const r = await q.lifecycle.requeueErrs(sel);
    return r.failed ? partialReply('requeued', r) : ['ok', r.done];
  },

  set_priority: async (q, args) => {
    const id = msgId(args);
    const { priority } = readJobFields({ priority: args.priority }, invalidField);
    if (priority === undefined) throw RqError.of('RQ_ERR_LACKING_FIELD', 'priority');
    return ['ok', await q.lifecycle.setPriority(id, await located(q, id), priority, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },

  reschedule_message: async (q, args) => {
    const id = msgId(args);
    const due = dueOf(args, q.now());
    if (due === undefined) throw RqError.of('RQ_ERR_LACKING_FIELD', 'due');
    return ['ok', await q.lifecycle.reschedule(id, await located(q, id), due, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },

  /**
   * rq-mgr's word that a host now takes pool `queue` (docs/fleet.md, Pools): the messages of this
   * (relay) queue waiting out a back-off for `fleet:<queue>` are due now, each rescheduled by `fleet`.
   * Only those tried before: one sent with a due time later is not sent early.
   */
  wake_pool: async (q, args) => {
    const queue = args.queue;
    if (typeof queue !== 'string' || queueNameProblem(queue) !== null) throw invalidField('queue', 'a queue name', queue);
    const now = Math.floor(q.now() / 1000);
    let woken = 0;
    for (const m of q.index.delayedInOrder(Infinity)) {
      if (m.dest !== `fleet:${queue}` || !(Number(m.count) > 0)) continue;
      // One that started or went meanwhile needs no waking.
      const where = await q.ops.locate(m.msg_id);
      if (where?.state === 'que' && (await q.lifecycle.reschedule(m.msg_id, where, now, 'fleet').catch(() => null)) !== null) woken++;
    }
    return ['ok', woken];
  },

  get_history: async (q, args) => {
    const id = msgId(args);
    return ['ok', await q.lifecycle.history(id, await located(q, id))];
  },

  /**
   * Not in rq-beyond: answers once the message has finished (`rq cancel --wait`), as
   * get_message_status would then; a message deleted meanwhile (a purge) answers `deleted`.
   */
  wait_message: async (q, args) => {
    const id = msgId(args);
    await located(q, id);
    const timeoutS = countArg(args, 'timeout', 86_400, 60)!;
    q.log.debug({ msg_id: id, timeout_s: timeoutS }, 'waiting for the message to finish');
    const end = await waitFinished(q.events, q.spool, id, timeoutS * 1000);
    if (end === 'timed out') throw RqError.of('RQ_ERR_WAIT_TIMED_OUT');
    if (end === 'closing') throw RqError.of('RQ_ERR_QUEUE_DOWN');
    // The disk, not memory: the index drops a finished run a few microtasks after its rename.
    const state = await q.spool.locate(id);
    return ['ok', state ? await q.ops.statusView(id, { state, dir: q.spool.msgDir(state, id) }) : { path: null, status: 'deleted', state: 'deleted' }];
  },

  running: async (q) => ['ok', runningList(q.index, q.now(), (id) => q.limits.heldKey(id))],

  waiting: async (q, args) => ['ok', waitingList(q.index, q, oneOf<WaitReason>(args, 'reason', WAIT_REASONS), countArg(args, 'limit', MAX_LISTED, 1000)!)],
};
