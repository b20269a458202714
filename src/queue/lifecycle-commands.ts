// The queue socket's lifecycle commands (rq-beyond §B1.8): cancel_message, requeue_message, reschedule_message, set_priority, get_history.
import { RqError, invalidField } from '../errors.js';
import { readJobFields } from '../message/job-fields.js';
import { isMsgId } from '../message/names.js';
import type { Queue } from './queue.js';

type Args = Record<string, unknown>;

/** Commands answered while the queue is DOWN (read-only), once the recovery scan is done. */
export const ANSWERED_WHEN_DOWN = new Set(['get_history']);

const MAX_REASON = 1000;
const MAX_ACTOR = 64;

function msgId(args: Args): string {
  const id = args.msg_id;
  if (id === undefined || id === null || id === '') throw RqError.of('RQ_ERR_LACKING_FIELD', 'msg_id');
  if (!isMsgId(id) || (id as string).startsWith('.')) throw invalidField('msg_id', 'a message id like 20261121.1643.46.613.2164022', id);
  return id as string;
}

function optionalText(args: Args, field: string, max: number): string | undefined {
  const v = args[field];
  if (v === undefined || v === null || v === '') return undefined;
  // eslint-disable-next-line no-control-regex
  if (typeof v !== 'string' || v.length > max || /\u0000/.test(v)) {
    throw invalidField(field, `text of at most ${max} characters without NUL`, typeof v === 'string' && v.length > max ? `${v.length} characters` : v);
  }
  return v;
}

function flag(args: Args, field: string): boolean {
  const v = args[field];
  if (v === undefined || v === null || v === false || v === 'false' || v === '0' || v === '') return false;
  if (v === true || v === 'true' || v === '1' || v === 1) return true;
  throw invalidField(field, 'true or false', v);
}

/** `due` (epoch seconds) or `delay` (seconds from now), not both; undefined for "now". */
function dueOf(args: Args, nowMs: number): number | undefined {
  const given = (f: string) => args[f] !== undefined && args[f] !== null && args[f] !== '';
  if (given('due') && given('delay')) throw RqError.of('RQ_ERR_USAGE', 'give due or delay, not both');
  const num = (f: string) => (typeof args[f] === 'string' && (args[f] as string).trim() !== '' ? Number(args[f]) : args[f]);
  if (given('due')) {
    const due = num('due');
    if (typeof due !== 'number' || !Number.isFinite(due) || due < 0) throw invalidField('due', 'epoch seconds (a number)', args.due);
    return due;
  }
  if (given('delay')) {
    const delay = num('delay');
    if (typeof delay !== 'number' || !Number.isFinite(delay) || delay < 0) throw invalidField('delay', 'seconds >= 0', args.delay);
    return Math.round(nowMs + delay * 1000) / 1000;
  }
  return undefined;
}

async function located(q: Queue, id: string) {
  const where = await q.ops.locate(id);
  if (!where) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
  return where;
}

export const LIFECYCLE_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  cancel_message: async (q, args) => {
    const id = msgId(args);
    if (flag(args, 'purge')) throw invalidField('purge', 'false (purge is not supported yet: cancel, then delete the message)', args.purge);
    const req = { reason: optionalText(args, 'reason', MAX_REASON), actor: optionalText(args, 'actor', MAX_ACTOR) };
    const done = await q.lifecycle.cancel(id, await located(q, id), req);
    return ['ok', done === 'cancelled' ? 'msg cancelled' : 'msg cancelling'];
  },

  requeue_message: async (q, args) => {
    const id = msgId(args);
    const opts = { reset: flag(args, 'reset'), due: dueOf(args, Date.now()), actor: optionalText(args, 'actor', MAX_ACTOR) };
    await q.lifecycle.requeue(id, await q.ops.locate(id), opts);
    return ['ok', 'msg requeued'];
  },

  set_priority: async (q, args) => {
    const id = msgId(args);
    const { priority } = readJobFields({ priority: args.priority }, invalidField);
    if (priority === undefined) throw RqError.of('RQ_ERR_LACKING_FIELD', 'priority');
    return ['ok', await q.lifecycle.setPriority(id, await located(q, id), priority, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },

  reschedule_message: async (q, args) => {
    const id = msgId(args);
    const due = dueOf(args, Date.now());
    if (due === undefined) throw RqError.of('RQ_ERR_LACKING_FIELD', 'due');
    return ['ok', await q.lifecycle.reschedule(id, await located(q, id), due, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },

  get_history: async (q, args) => {
    const id = msgId(args);
    return ['ok', await q.lifecycle.history(id, await located(q, id))];
  },
};
