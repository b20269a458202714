// The queue socket's commands (spec §7): request text in, JSON reply text out; never throws.
import type { Logger } from 'pino';
import { type ErrorArgs, type ErrorCode, RqError, invalidField } from '../../errors.js';
import { isMsgId } from '../../message/names.js';
import { isFinished } from '../../message/states.js';
import { parseJsonArg, parseRequest } from '../../ipc/rq1.js';
import { partialReply } from '../../ipc/partial-reply.js';
import { CODES_COMMAND, type Connection, refusalOf } from '../../ipc/reply-codes.js';
import { ANSWERED_WHEN_DOWN, LIFECYCLE_COMMANDS } from './lifecycle-commands.js';
import { TAG_COMMANDS, TAG_READS } from './tag-commands.js';
import { LIMIT_COMMANDS } from './limit-commands.js';
import { DEPENDENCY_COMMANDS, DEPENDENCY_INTERNAL } from './dependency-commands.js';
import { STATS_COMMANDS } from './stats-commands.js';
import { SEARCH_COMMANDS } from './search-commands.js';
import { bulkCommands } from './bulk-commands.js';
import { CREATE_COMMANDS } from './create-commands.js';
import type { Located, Queue } from '../queue.js';

type Reply = unknown;
type Args = Record<string, unknown>;
/** `conn`, for a reply that carries refusals of its own (create_messages): their codes go to a client that asked. */
type Handler = (q: Queue, args: Args, conn?: Connection) => Promise<Reply> | Reply;

const ALWAYS = new Set(['ping', 'uptime', 'config', 'status', 'status_detail', 'shutdown']);

/** A classic refusal from the catalogue, for handleRequest to answer as `["fail", text]` (with its code to a client that asked). */
function refuse<C extends ErrorCode>(code: C, ...args: ErrorArgs<C>): never {
  throw RqError.of(code, ...args);
}

/** A command's msg_id, located; or the refusal to throw when it is missing, malformed or unknown. */
async function target(q: Queue, args: Args): Promise<{ id: string; where: Located } | { refused: RqError }> {
  const id = args.msg_id;
  if (id === undefined || id === null || id === '') return { refused: RqError.of('RQ_ERR_LACKING_FIELD', 'msg_id') };
  if (!isMsgId(id)) return { refused: invalidField('msg_id', 'a message id like 20261121.1643.46.613.2164022', id) };
  const where = await q.ops.locate(id);
  return where ? { id, where } : { refused: RqError.of('RQ_ERR_NO_SUCH_MSG') };
}

export const COMMANDS: Record<string, Handler> = {
  ping: () => ['pong'],
  uptime: (q) => [q.uptime()],
  config: (q) => ['ok', q.config],
  status: (q) => [q.status()],
  // rq extension: the status with why the queue cannot run scripts (SCRIPTERROR, DISK FULL), which classic `status` has no room for.
  status_detail: (q) => {
    const status = q.status();
    const reason = q.admin.reason;
    return ['ok', reason === null ? { status } : { status, reason }];
  },
  shutdown: () => ['ok'],
  ...CREATE_COMMANDS,

  attach_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw args.msg_id ? RqError.of('RQ_ERR_CANNOT_FIND_MESSAGE') : t.refused;
    if (t.where.state !== 'prep') refuse('RQ_ERR_CANNOT_FIND_MESSAGE');
    if (typeof args.pathname !== 'string' || args.pathname === '') refuse('RQ_ERR_LACKING_FIELD', 'pathname');
    if (args.name !== undefined && typeof args.name !== 'string') throw invalidField('name', 'a file name', args.name);
    // A refused attachment (RQ_ERR_ATTACH_REFUSED) answers with its classic text.
    const r = await q.spool.attach(t.id, args.pathname as string, args.name as string | undefined);
    return ['ok', `${r.md5}-Attached successfully`];
  },

  delete_attach_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    if (t.where.state !== 'prep') refuse('RQ_ERR_NOT_IN_PREP');
    if (typeof args.attachment_name !== 'string') return [false, 'No attachment with that named for msg'];
    const problem = await q.spool.deleteAttachment(t.id, args.attachment_name);
    return problem === null ? ['ok', 'Attachment deleted successfully'] : [false, problem];
  },

  commit_message: async (q, args) => {
    const id = args.msg_id;
    if (id === undefined || id === null || id === '') refuse('RQ_ERR_LACKING_FIELD', 'msg_id');
    if (!isMsgId(id) || !q.index.hasPrep(id)) refuse('RQ_ERR_CANNOT_FIND_MESSAGE');
    let committed: boolean;
    try {
      committed = await q.ops.commit(id as string);
    } catch {
      return refuse('RQ_ERR_COMMIT_FAILED');
    }
    return committed ? ['ok', 'msg commited'] : refuse('RQ_ERR_CANNOT_FIND_MESSAGE');
  },

  get_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    try {
      return ['ok', await q.ops.view(t.id, t.where)];
    } catch {
      return refuse('RQ_ERR_UNREADABLE_MSG');
    }
  },

  get_message_state: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    return ['ok', t.where.state];
  },

  get_message_status: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    return ['ok', await q.ops.statusView(t.id, t.where)];
  },

  delete_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    if (t.where.state === 'run') refuse('RQ_ERR_MSG_RUNNING');
    try {
      await q.ops.remove(t.id, t.where);
    } catch (err) {
      return refuse('RQ_ERR_NOT_DELETED', (err as Error).message);
    }
    return ['ok', 'msg deleted'];
  },

  destroy_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    return q.destroy(t.id) ? ['ok', 'msg destroyed'] : refuse('RQ_ERR_NO_SUCH_MSG');
  },

  run_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    if (t.where.state === 'run') refuse('RQ_ERR_ALREADY_RUNNING');
    if (t.where.state !== 'que' || !q.index.isQueued(t.id)) refuse('RQ_ERR_NOT_RUNNABLE');
    await q.ops.runNow(t.id);
    return ['ok', 'msg sent to front of run queue'];
  },

  clone_message: async (q, args) => {
    const t = await target(q, args);
    if ('refused' in t) throw t.refused;
    if (!isFinished(t.where.state)) refuse('RQ_ERR_CANNOT_CLONE', t.where.state);
    try {
      return ['ok', q.fullId((await q.ops.clone(t.id, t.where)).msg_id)];
    } catch {
      return refuse('RQ_ERR_CLONE_FAILED');
    }
  },

  num_messages: (q) => q.counts(),

  messages: async (q, args) => {
    const state = args.state;
    const limit = args.limit === undefined ? 20 : Number(args.limit);
    if (!Number.isInteger(limit) || limit < 0) throw invalidField('limit', 'a whole number >= 0', args.limit);
    switch (state) {
      case 'prep':
        return q.index.prepIds(limit);
      case 'que':
        // Ready in run order, then delayed, then the ones waiting on dependencies or a slot (rq-beyond §B2).
        return [...q.index.queuedInOrder(limit), ...q.index.parkedMessages()].slice(0, limit).map((m) => [m.msg_id, m.due]);
      case 'run':
        return q.index
          .allRuns()
          .slice(0, limit)
          .map((r) => [r.id, q.ops.runStatus(r.id)]);
      case 'done': {
        const ids = await q.spool.listHashed('done', limit);
        if (typeof args.filter !== 'string' || args.filter === '') return ids;
        const out: string[] = [];
        for (const id of ids) {
          const text = await q.spool.readMessage('done', id).then(
            (m) => JSON.stringify(m),
            () => '',
          );
          if (text.includes(args.filter)) out.push(id);
        }
        return out;
      }
      case 'relayed':
        return q.spool.listHashed('relayed', limit);
      case 'err':
        return q.spool.listFlat('err');
      case 'errack':
        return q.spool.listFlat('err', true);
      default:
        return refuse('RQ_ERR_STATE_FIELD', String(state ?? ''));
    }
  },

  ack_errs: async (q) => {
    const r = await q.ops.ackErrs();
    return r.failed ? partialReply('acknowledged', r) : ['ok', r.done];
  },
  ...LIFECYCLE_COMMANDS,
  ...TAG_COMMANDS,
  ...LIMIT_COMMANDS,
  ...DEPENDENCY_COMMANDS,
  ...STATS_COMMANDS,
  ...SEARCH_COMMANDS,
};
// Bulk actions run each message through the commands above, so they are added once the table exists.
Object.assign(COMMANDS, bulkCommands(COMMANDS));

/**
 * Answers one request. Errors become replies: a validation error's text, or an internal error
 * (logged); an unknown command gets the classic `["ERROR", …]` reply; nothing crashes the queue.
 */
export async function handleRequest(q: Queue, payload: string, log: Logger, conn: Connection = { codes: false }): Promise<string> {
  const { command, arg } = parseRequest(payload);
  if (command === CODES_COMMAND) {
    conn.codes = true;
    return JSON.stringify(['ok', 'codes']);
  }
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_UNKNOWN_COMMAND', command.slice(0, 80)), 'ERROR'));
  if (!ALWAYS.has(command)) {
    await q.ready;
    if (
      q.isDown() &&
      !ANSWERED_WHEN_DOWN.has(command) &&
      !TAG_READS.includes(command) &&
      !(command in LIMIT_COMMANDS) &&
      !(command in STATS_COMMANDS) &&
      !(command in SEARCH_COMMANDS) &&
      !DEPENDENCY_INTERNAL.includes(command)
    )
      return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_QUEUE_DOWN')));
  }
  const parsed = arg.trim() === '' ? { ok: true as const, value: {} } : parseJsonArg(arg);
  if (!parsed.ok) return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_INVALID_JSON', `invalid JSON argument: ${parsed.error}`)));
  // Every command's argument is an object (or none): another value is refused, not read as {} and refused for a field it lacks.
  if (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    return JSON.stringify(refusalOf(conn, invalidField('argument', 'a JSON object such as {"msg_id": "…"}, or none', parsed.value)));
  }
  const args = parsed.value as Args;
  try {
    return JSON.stringify(await handler(q, args, conn));
  } catch (err) {
    if (err instanceof RqError) return JSON.stringify(refusalOf(conn, err));
    log.error({ err, command }, 'command failed');
    return JSON.stringify(refusalOf(conn, RqError.of('RQ_ERR_INTERNAL', (err as Error).message)));
  }
}
