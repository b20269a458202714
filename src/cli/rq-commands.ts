// The rq tool's subcommands (spec §10.1): options in, one queue socket command, the classic output lines out.
import fs from 'node:fs';
import path from 'node:path';
import { RqError, isErrno, shown } from '../errors.js';
import { queuePaths } from '../config/paths.js';
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { describeRule, parseRules } from '../builtins/router-rules.js';
import { ask, replyLine } from './queue-ask.js';
import { DEPENDS_LIMITS_COMMANDS } from './rq-depends-limits.js';
import { LIFECYCLE_COMMANDS } from './rq-lifecycle.js';
import { LIST_COMMANDS } from './rq-queue-lists.js';
import { STATS_COMMANDS } from './rq-stats.js';
import { TAGGED_COMMANDS } from './rq-tagged.js';
import { TAG_COMMANDS } from './rq-tags.js';
import { type Options, checkQueueName, messageFields, msgIdOpt, pathnameOpt, requiredOpt, stringOpt, usage } from './rq-options.js';

export interface RqIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface CommandContext {
  opts: Options;
  /** Words that are not options: `rq stats <queue>`'s queue. */
  rest?: string[];
  root: string;
  io: RqIo;
}

export interface RqCommand {
  summary: string;
  /** Returns the exit code: 0 iff the queue said ok. */
  run: (ctx: CommandContext) => Promise<number>;
}

const REMOTE = /^https?:/i;

/** Where a new message goes: its dest queue, or `relay` for a remote dest when relaying is allowed (spec §11.1). */
function destQueue(dest: string, opts: Options, relays: boolean): string {
  if (!REMOTE.test(dest)) return checkQueueName(dest, 'dest');
  if (!relays) throw usage(`--dest: expected a local queue name (single_que does not relay), received ${shown(dest)}`);
  const relayOk = opts['relay-ok'];
  if (relayOk === undefined || relayOk === false) {
    throw usage(`cannot relay message to ${dest}: add --relay-ok to send it through the local relay queue`);
  }
  return 'relay';
}

function create(command: 'create_message' | 'prep_message' | 'single_que', summary: string): RqCommand {
  return {
    summary,
    run: async ({ opts, root, io }) => {
      const fields = messageFields(opts);
      const reply = await ask(root, destQueue(fields.dest as string, opts, command !== 'single_que'), (c) => c.create(fields, command));
      io.stdout(replyLine(reply));
      return reply.ok ? 0 : 1;
    },
  };
}

type MessageCall = (c: QueueClient, id: string) => Promise<Answer<unknown>>;
const BY_COMMAND: Record<'commit_message' | 'get_message_status' | 'get_message_state' | 'get_message' | 'clone_message', MessageCall> = {
  commit_message: (c, id) => c.commit(id),
  get_message_status: (c, id) => c.messageStatus(id),
  get_message_state: (c, id) => c.state(id),
  get_message: (c, id) => c.get(id),
  clone_message: (c, id) => c.act('clone_message', id),
};

/** A command on one message: `--msg_id` names the queue and the id; `show` renders an ok reply. */
function onMessage(command: keyof typeof BY_COMMAND, summary: string, show: (value: Record<string, unknown>) => string[] = () => []): RqCommand {
  return {
    summary,
    run: async ({ opts, root, io }) => {
      const target = msgIdOpt(opts);
      const reply = await ask(root, target.queue, (c) => BY_COMMAND[command](c, target.id));
      const lines = reply.ok && typeof reply.value === 'object' && reply.value !== null ? show(reply.value as Record<string, unknown>) : [];
      for (const line of lines.length > 0 ? lines : [replyLine(reply)]) io.stdout(line);
      return reply.ok ? 0 : 1;
    },
  };
}

/** The classic tool's own checks, with its texts, so a bad path fails here rather than as a queue reply. */
function checkAttachment(pathname: string): void {
  const refuse = (text: string) => RqError.of('RQ_ERR_INVALID_ATTACHMENT', text);
  let st;
  try {
    st = fs.statSync(pathname);
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) throw refuse(`No such file ${pathname} to attach to message`);
    throw refuse(`Attachment currently cannot be read: ${pathname} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (st.isDirectory()) throw refuse(`Attachment currently cannot be a directory ${pathname}`);
  try {
    fs.accessSync(pathname, fs.constants.R_OK);
  } catch {
    throw refuse(`Attachment currently cannot be read: ${pathname}`);
  }
  if (!st.isFile()) throw refuse(`Attachment currently not of supported type: ${pathname}`);
}

const attachmesg: RqCommand = {
  summary: 'attach a file to a prepared message (--msg_id FULLID --pathname FILE [--name NAME])',
  run: async ({ opts, root, io }) => {
    const target = msgIdOpt(opts);
    const pathname = pathnameOpt(opts, io.cwd);
    const name = stringOpt(opts, 'name', 'an attachment name');
    if (!fs.existsSync(queuePaths(root, target.queue).dir)) throw RqError.of('RQ_ERR_NO_SUCH_QUEUE', target.queue);
    checkAttachment(pathname);
    const reply = await ask(root, target.queue, (c) => c.attach(target.id, pathname, name));
    io.stdout(`${replyLine(reply)} for Message: ${target.given} attachment`);
    return reply.ok ? 0 : 1;
  },
};

/** `<name> <md5> <size> <path>` per attachment, after the count. */
function attachmentLines(msg: Record<string, unknown>): string[] {
  const atts = (msg._attachments ?? {}) as Record<string, { md5?: unknown; size?: unknown; path?: unknown }>;
  const names = Object.keys(atts);
  return [`ok ${names.length}`, ...names.map((n) => `${n} ${atts[n].md5} ${atts[n].size} ${atts[n].path}`)];
}

const verifyRules: RqCommand = {
  summary: 'check an rq_router rules file (--path FILE [--verbose]): prints ok, or fail bad router rules file',
  run: async ({ opts, io }) => {
    const file = path.resolve(io.cwd, requiredOpt(opts, 'path', 'the path of an rq_router rules file'));
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      io.stderr(`rq: verify_rules: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      io.stdout('fail bad router rules file');
      return 1;
    }
    const verbose = opts.verbose !== undefined && opts.verbose !== false;
    try {
      const set = parseRules(text, file);
      if (verbose) {
        for (const w of set.warnings) io.stderr(`warning: ${w}`);
        for (const r of set.rules) io.stdout(describeRule(r));
      }
    } catch (err) {
      if (!(err instanceof RqError)) throw err;
      // The reason goes to stderr so stdout stays the classic one line.
      io.stderr(`rq: verify_rules: ${err.message}`);
      io.stdout('fail bad router rules file');
      return 1;
    }
    io.stdout('ok');
    return 0;
  },
};

/** In the classic tool's order; the keys are the command words. */
export const RQ_COMMANDS: Record<string, RqCommand> = {
  sendmesg: create(
    'create_message',
    'send a message (--dest QUEUE|URL [--relay-ok] [--src --param1..4 --count --max_count --due --force_remote --idempotency-key KEY] [--priority N --max_age S --expire_at EPOCH] [--max_retries N --backoff_base S --min_retry_delay S --max_retry_delay S --retry_jitter F --timeout S --heartbeat_timeout S] [--tags a,b] [--depends <queue>/<id>,… --depends_fail fail|run|wait] [--limit KEY --limit_concurrency N])',
  ),
  prepmesg: create('prep_message', 'create a message in prep, to attach files to before commitmesg (same options as sendmesg)'),
  attachmesg,
  commitmesg: onMessage('commit_message', 'queue a prepared message (--msg_id FULLID)'),
  statusmesg: onMessage('get_message_status', 'print a message\'s status (--msg_id FULLID)', (v) => [`ok ${v.status}`]),
  state: onMessage('get_message_state', 'print a message\'s state (--msg_id FULLID)'),
  statuscountmesg: onMessage('get_message', 'print how many times a message was resent (--msg_id FULLID)', (v) => [`ok ${v.count ?? 0}`]),
  attachstatusmesg: onMessage('get_message', 'list a message\'s attachments: name md5 size path (--msg_id FULLID)', attachmentLines),
  single_que: create('single_que', 'send a message unless the queue already has one waiting (options as sendmesg, local dest only)'),
  clone: onMessage('clone_message', 'copy a done, relayed or err message into the queue again (--msg_id FULLID)'),
  verify_rules: verifyRules,
  ...LIFECYCLE_COMMANDS,
  ...LIST_COMMANDS,
  ...DEPENDS_LIMITS_COMMANDS,
  ...TAG_COMMANDS,
  ...TAGGED_COMMANDS,
  ...STATS_COMMANDS,
};
