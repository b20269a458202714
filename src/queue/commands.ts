// The queue socket's commands (spec §7): request text in, JSON reply text out; never throws.
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import { normaliseCreate } from '../message/message.js';
import { AttachRefused } from '../spool/attachments.js';
import { isMsgId } from '../message/names.js';
import { isFinished } from '../message/states.js';
import { parseJsonArg, parseRequest } from '../ipc/rq1.js';
import type { Located, Queue } from './queue.js';

type Reply = unknown;
type Args = Record<string, unknown>;
type Handler = (q: Queue, args: Args) => Promise<Reply> | Reply;

const ALWAYS = new Set(['ping', 'uptime', 'config', 'status', 'shutdown']);

const fail = (text: string): Reply => ['fail', text];

/** A command's msg_id, located; or the reply to give when it is missing, malformed or unknown. */
async function target(q: Queue, args: Args): Promise<{ id: string; where: Located } | { reply: Reply }> {
  const id = args.msg_id;
  if (id === undefined || id === null || id === '') return { reply: fail("lacking 'msg_id' field") };
  if (!isMsgId(id)) return { reply: fail(`msg_id: expected a message id like 20261121.1643.46.613.2164022, received ${JSON.stringify(id)}`) };
  const where = await q.ops.locate(id);
  return where ? { id, where } : { reply: fail('msg not found') };
}

function createHandler(mode: 'commit' | 'prep' | 'single'): Handler {
  return async (q, args) => {
    const fields = normaliseCreate(args);
    if (mode === 'single') {
      const same = q.index.nextQueued((m) => ['param1', 'param2', 'param3', 'param4'].every((p) => (m[p] ?? null) === (fields[p as 'param1'] ?? null)));
      if (same) return ['ok', q.fullId(same.msg_id)];
    }
    const msg = await q.ops.create(fields, mode !== 'prep');
    return ['ok', q.fullId(msg.msg_id)];
  };
}

export const COMMANDS: Record<string, Handler> = {
  ping: () => ['pong'],
  uptime: (q) => [q.uptime()],
  config: (q) => ['ok', q.config],
  status: (q) => [q.status()],
  shutdown: () => ['ok'],
  create_message: createHandler('commit'),
  prep_message: createHandler('prep'),
  single_que: createHandler('single'),

  attach_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return args.msg_id ? fail('cannot find message') : t.reply;
    if (t.where.state !== 'prep') return fail('cannot find message');
    if (typeof args.pathname !== 'string' || args.pathname === '') return fail("lacking 'pathname' field");
    if (args.name !== undefined && typeof args.name !== 'string') return fail(`name: expected a file name, received ${JSON.stringify(args.name)}`);
    try {
      const r = await q.spool.attach(t.id, args.pathname, args.name as string | undefined);
      return ['ok', `${r.md5}-Attached successfully`];
    } catch (err) {
      if (err instanceof AttachRefused) return fail(err.message);
      throw err;
    }
  },

  delete_attach_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    if (t.where.state !== 'prep') return fail('msg not in prep');
    if (typeof args.attachment_name !== 'string') return [false, 'No attachment with that named for msg'];
    const problem = await q.spool.deleteAttachment(t.id, args.attachment_name);
    return problem === null ? ['ok', 'Attachment deleted successfully'] : [false, problem];
  },

  commit_message: async (q, args) => {
    const id = args.msg_id;
    if (id === undefined || id === null || id === '') return fail("lacking 'msg_id' field");
    if (!isMsgId(id) || !q.index.hasPrep(id)) return fail('cannot find message');
    try {
      return (await q.ops.commit(id)) ? ['ok', 'msg commited'] : fail('cannot find message');
    } catch {
      return fail('unknown reason');
    }
  },

  get_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    try {
      return ['ok', await q.ops.view(t.id, t.where)];
    } catch {
      return fail("msg couldn't be read");
    }
  },

  get_message_state: async (q, args) => {
    const t = await target(q, args);
    return 'reply' in t ? t.reply : ['ok', t.where.state];
  },

  get_message_status: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    const job = await q.ops.jobStatus(t.id, t.where);
    const status = job ? `${t.where.state} - ${job.job_status ?? ''}` : t.where.state;
    return ['ok', { path: q.spool.relPath(t.where.dir), status, state: t.where.state }];
  },

  delete_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    if (t.where.state === 'run') return fail('msg is running: destroy it first');
    try {
      await q.ops.remove(t.id, t.where);
    } catch (err) {
      return fail(`msg not deleted: ${(err as Error).message}`);
    }
    return ['ok', 'msg deleted'];
  },

  destroy_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    return q.destroy(t.id) ? ['ok', 'msg destroyed'] : fail('msg not found');
  },

  run_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    if (t.where.state === 'run') return fail('msg already running');
    if (t.where.state !== 'que' || !q.index.isQueued(t.id)) return fail('msg not in runnable state');
    await q.ops.runNow(t.id);
    return ['ok', 'msg sent to front of run queue'];
  },

  clone_message: async (q, args) => {
    const t = await target(q, args);
    if ('reply' in t) return t.reply;
    if (!isFinished(t.where.state)) return fail(`cannot clone message in ${t.where.state} state`);
    try {
      return ['ok', q.fullId((await q.ops.clone(t.id, t.where)).msg_id)];
    } catch {
      return fail("msg couldn't be cloned");
    }
  },

  num_messages: (q) => q.counts(),

  messages: async (q, args) => {
    const state = args.state;
    const limit = args.limit === undefined ? 20 : Number(args.limit);
    if (!Number.isInteger(limit) || limit < 0) return fail(`limit: expected a whole number >= 0, received ${JSON.stringify(args.limit)}`);
    switch (state) {
      case 'prep':
        return q.index.prepIds(limit);
      case 'que':
        return q.index.queuedInOrder(limit).map((m) => [m.msg_id, m.due]);
      case 'run':
        return q.index.allRuns().slice(0, limit).map((r) => [r.id, q.ops.runStatus(r.id)]);
      case 'done': {
        const ids = await q.spool.listHashed('done', limit);
        if (typeof args.filter !== 'string' || args.filter === '') return ids;
        const out: string[] = [];
        for (const id of ids) {
          const text = await q.spool.readMessage('done', id).then((m) => JSON.stringify(m), () => '');
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
        return fail(`invalid or missing 'state' field (${state ?? ''})`);
    }
  },

  ack_errs: async (q) => ['ok', await q.ops.ackErrs()],
};

/**
 * Answers one request. Errors become replies: a validation error's text, or an internal error
 * (logged); an unknown command gets the classic `["ERROR", …]` reply; nothing crashes the queue.
 */
export async function handleRequest(q: Queue, payload: string, log: Logger): Promise<string> {
  const { command, arg } = parseRequest(payload);
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) return JSON.stringify(['ERROR', `unknown command: ${command.slice(0, 80)}`]);
  if (!ALWAYS.has(command)) {
    await q.ready;
    if (q.isDown()) return JSON.stringify(['fail', 'status: DOWN']);
  }
  const parsed = arg.trim() === '' ? { ok: true as const, value: {} } : parseJsonArg(arg);
  if (!parsed.ok) return JSON.stringify(fail(`invalid JSON argument: ${parsed.error}`));
  const args = (typeof parsed.value === 'object' && parsed.value !== null && !Array.isArray(parsed.value) ? parsed.value : {}) as Args;
  try {
    return JSON.stringify(await handler(q, args));
  } catch (err) {
    if (err instanceof RqError) return JSON.stringify(fail(err.message));
    log.error({ err, command }, 'command failed');
    return JSON.stringify(fail(`internal error: ${(err as Error).message}`));
  }
}
