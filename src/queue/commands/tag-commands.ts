// The queue socket's tag commands (rq-beyond §B9): tag_message, tagged, tags, cancel_tagged, reindex_tags.
import { RqError, invalidField } from '../../errors.js';
import { STATES } from '../../message/states.js';
import { partialReply } from '../../ipc/partial-reply.js';
import { TAG_EXPECTED, isTag, readTags } from '../../message/tags.js';
import { type Args, MAX_ACTOR, MAX_PAGE, MAX_REASON, countArg, msgId, offsetArg, oneOf, optionalText } from './command-args.js';
import type { Queue } from '../queue.js';

/** Commands of this file answered while the queue is DOWN (read-only). */
export const TAG_READS = ['tagged', 'tags'];

function tagArg(args: Args): string {
  const v = args.tag;
  if (v === undefined || v === null || v === '') throw RqError.of('RQ_ERR_LACKING_FIELD', 'tag');
  if (!isTag(v)) throw invalidField('tag', TAG_EXPECTED, v);
  return v;
}

function tagList(args: Args, field: 'add' | 'remove'): string[] {
  const v = args[field];
  return v === undefined || v === null || v === '' ? [] : readTags(v, invalidField, field);
}

export const TAG_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  tag_message: async (q, args) => {
    const id = msgId(args);
    const add = tagList(args, 'add');
    const remove = tagList(args, 'remove');
    if (!add.length && !remove.length) throw RqError.of('RQ_ERR_LACKING_FIELD', 'add or remove');
    return ['ok', await q.tags.change(id, add, remove, optionalText(args, 'actor', MAX_ACTOR) ?? 'socket')];
  },

  tagged: async (q, args) => {
    const query = { tag: tagArg(args), state: oneOf(args, 'state', STATES), offset: offsetArg(args), limit: countArg(args, 'limit', MAX_PAGE, 25)! };
    return ['ok', await q.tags.tagged(query.tag, query)];
  },

  tags: async (q) => ['ok', q.tags.counts()],

  cancel_tagged: async (q, args) => {
    const tag = tagArg(args);
    const r = await q.tags.cancelTagged(tag, { reason: optionalText(args, 'reason', MAX_REASON), actor: optionalText(args, 'actor', MAX_ACTOR) });
    return r.failed ? partialReply('cancelled', r) : ['ok', r.done];
  },

  /** Not in rq-beyond as a socket command: what `rq-mgr reindex <q>` asks; the number of (tag, message) pairs found. */
  reindex_tags: async (q) => ['ok', await q.tags.reindex()],
};
