// The queue socket's `bulk` (count with dry_run, or start) and `bulk_status` commands, and `ack_message`: each message of a bulk action goes through the single-message command that the socket answers, so a bulk follows the same rules.
import fs from 'node:fs';
import { counted, invalidField, RqError } from '../../errors.js';
import { valueOf } from '../../ipc/answer.js';
import { queuePaths } from '../../config/paths.js';
import { CLONE_FIELDS } from '../../message/create-fields.js';
import { type Message, pickFields } from '../../message/message.js';
import { isMsgId, queueNameProblem } from '../../message/names.js';
import { attachmentNames } from '../../spool/attachments.js';
import { mapLimit } from '../../spool/map-limit.js';
import { BULK_OPS, type BulkOp, type BulkStep, type BulkTarget } from '../lifecycle/bulk-ops.js';
import { type Args, countArg, flag, msgId, oneOf } from './command-args.js';
import type { Queue } from '../queue.js';
import { searchQuery } from './search-commands.js';

type Handler = (q: Queue, args: Args) => Promise<unknown> | unknown;

const MAX_IDS = 10_000;

/** Who may be acted on at all: the confirmation's count, and the targets of "all matching". */
function eligible(op: BulkOp, state: string, acked: boolean): boolean {
  if (op === 'retry') return state === 'err';
  if (op === 'ack') return state === 'err' && !acked;
  return state !== 'run';
}

function idsArg(args: Args): BulkTarget[] | undefined {
  const v = args.ids;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_IDS)
    throw invalidField('ids', `an array of 1 to ${MAX_IDS} message ids`, Array.isArray(v) ? counted(v.length, 'ids') : v);
  const seen = new Set<string>();
  const out: BulkTarget[] = [];
  v.forEach((id, i) => {
    if (!isMsgId(id)) throw invalidField(`ids[${i}]`, 'a message id like 20261121.1643.46.613.2164022 (an acknowledged error with its dot)', id);
    const bare = (id as string).replace(/^\./, '');
    if (!seen.has(bare)) out.push({ id: bare, acked: (id as string).startsWith('.') });
    seen.add(bare);
  });
  return out;
}

function destArg(q: Queue, op: BulkOp, args: Args): string | undefined {
  if (op !== 'move') {
    if (args.dest !== undefined && args.dest !== null && args.dest !== '') throw invalidField('dest', 'nothing (only a move has a destination)', args.dest);
    return undefined;
  }
  const dest = args.dest;
  if (typeof dest !== 'string' || dest === '') throw RqError.of('RQ_ERR_LACKING_FIELD', 'dest');
  const problem = queueNameProblem(dest);
  if (problem) throw invalidField('dest', 'a queue name', dest);
  if (dest === q.name) throw invalidField('dest', `another queue than ${q.name}`, dest);
  if (!fs.existsSync(queuePaths(q.spool.root, dest).dir)) throw invalidField('dest', 'an existing queue', dest);
  return dest;
}

/** The messages a bulk names: its ids (each located now), or every eligible match of its filter. */
async function targetsOf(q: Queue, op: BulkOp, args: Args): Promise<BulkTarget[]> {
  const ids = idsArg(args);
  const hasFilter = args.filter !== undefined && args.filter !== null;
  if ((ids === undefined) === !hasFilter) throw invalidField('ids', 'either ids or filter (not both)', hasFilter ? 'both' : 'neither');
  if (ids) {
    const located = await mapLimit(ids, 16, async (t) => ({ t, where: t.acked ? await q.ops.locateAny(`.${t.id}`) : await q.ops.locate(t.id) }));
    return located.filter(({ t, where }) => where !== null && eligible(op, where.state, t.acked)).map(({ t }) => t);
  }
  if (typeof args.filter !== 'object' || Array.isArray(args.filter))
    throw invalidField('filter', 'an object of search arguments, such as {"state": "err"}', args.filter);
  const picked = await q.stats.search.picked(searchQuery(args.filter as Args));
  return picked.filter((m) => eligible(op, m.state, m.acked)).map((m) => ({ id: m.id, acked: m.acked }));
}

/** Runs one socket command as the socket would; a refusal (thrown or answered) rejects with its text. */
async function through(table: Record<string, Handler>, q: Queue, command: string, args: Args): Promise<unknown> {
  return valueOf(await table[command](q, args));
}

function stepOf(table: Record<string, Handler>, q: Queue, op: BulkOp, dest?: string): BulkStep {
  const name = (t: BulkTarget) => (t.acked ? `.${t.id}` : t.id);
  switch (op) {
    case 'retry':
      return async (t) => void (await through(table, q, 'requeue_message', { msg_id: t.id, actor: 'bulk' }));
    case 'delete':
      return async (t) => void (await through(table, q, 'delete_message', { msg_id: name(t) }));
    case 'ack':
      return async (t) => void (await through(table, q, 'ack_message', { msg_id: t.id }));
    case 'move':
      return async (t) => {
        const where = await q.ops.locateAny(name(t));
        if (!where) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
        if (where.state === 'run') throw RqError.of('RQ_ERR_MSG_RUNNING');
        if ((await attachmentNames(where.dir)).length) throw RqError.of('RQ_ERR_MOVE_ATTACHMENTS');

        const msg: Message = await q.spool.readMessage(where.state, name(t));
        // The key makes a repeated move (the same bulk run again after a crash) find its first copy instead of making a second.
        // What a clone carries (its attachments aside, refused above).
        const fields = { ...pickFields(msg, CLONE_FIELDS), dest: dest!, idempotency_key: `bulk-move:${q.name}/${t.id}` };
        const made = await q.peer(dest!).create(fields);
        if (!made.ok) throw new RqError(made.code, `${dest}: ${made.text}`);
        await through(table, q, 'delete_message', { msg_id: name(t) });
      };
  }
}

export function bulkCommands(table: Record<string, Handler>): Record<string, Handler> {
  return {
    ack_message: async (q, args) => {
      const id = msgId(args);
      const where = await q.ops.locate(id);
      if (!where) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
      await q.ops.ackErr(id, where);
      return ['ok', 'msg acknowledged'];
    },

    /** `{op, ids | filter, dest?, dry_run?}`: with dry_run the count that would change; else the job, started. */
    bulk: async (q, args) => {
      const op = oneOf(args, 'op', BULK_OPS);
      if (!op) throw RqError.of('RQ_ERR_LACKING_FIELD', 'op');
      const dest = destArg(q, op, args);
      const targets = await targetsOf(q, op, args);
      if (flag(args, 'dry_run')) return ['ok', { op, count: targets.length }];
      return ['ok', q.bulk.start(op, targets, stepOf(table, q, op, dest), dest)];
    },

    /** `{}`: the jobs this process remembers, newest first. `{job, seen?, wait_ms?}`: the job now, or once it has handled more than `seen` messages (or finished, or wait_ms passed). */
    bulk_status: async (q, args) => {
      if (args.job === undefined || args.job === null || args.job === '') return ['ok', q.bulk.list()];
      const job = typeof args.job === 'string' ? q.bulk.get(args.job) : undefined;
      if (!job) throw invalidField('job', 'a bulk job of this queue process (jobs are forgotten when it restarts)', args.job);
      const seen = args.seen === undefined ? -1 : args.seen;
      if (typeof seen !== 'number' || !Number.isInteger(seen) || seen < -1) throw invalidField('seen', 'a whole number of messages handled (or -1)', args.seen);
      const waitMs = countArg(args, 'wait_ms', 60_000) ?? 0;
      return ['ok', await q.bulk.waitPast(job, seen, waitMs)];
    },
  };
}
