// The rq tool's subcommands (spec §10.1): options in, one queue socket command, the classic output lines out.
import fs from 'node:fs';
import path from 'node:path';
import { RqError, isErrno, shown } from '../errors.js';
import { queuePaths } from '../config/paths.js';
import type { Answer } from '../ipc/answer.js';
import { isRelayedDest, isRemoteUrl } from '../message/relay-dests.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { describeRule, parseRules } from '../builtins/router-rules.js';
import { ask, replyLine } from './queue-ask.js';
import { DEPENDS_LIMITS_COMMANDS } from './rq-depends-limits.js';
import { LIFECYCLE_COMMANDS } from './rq-lifecycle.js';
import { LIST_COMMANDS } from './rq-queue-lists.js';
import { STATS_COMMANDS } from './rq-stats.js';
import { TAGGED_COMMANDS } from './rq-tagged.js';
import { TAG_COMMANDS } from './rq-tags.js';
import { WAIT_COMMANDS, waitAndReport, waitOpt } from './rq-wait.js';
import { TAIL_COMMANDS } from './rq-tail.js';
import { BROWSE_COMMANDS } from './rq-browse.js';
import { OPERATOR_COMMANDS } from './rq-operator.js';
import { DOCTOR_COMMANDS } from './rq-doctor.js';
import { FLEET_COMMANDS } from './rq-fleet.js';
import { notePool } from './pool-note.js';
import { VERSION_COMMANDS } from './rq-version.js';
import { BULK_COMMANDS } from './rq-bulk.js';
import { FROM_FILE, sendFromFile } from './rq-from-file.js';
import { type Options, checkQueueName, flagOpt, messageFields, pathnameOpt, requiredOpt, stringOpt, usage } from './rq-options.js';
import { messageTarget } from './message-target.js';
import type { RqCommand } from './rq-command.js';
import type { CommandSpec } from './command-spec.js';
import { JSON_FLAG, MSG_ARG, MSG_ID_OR_ARG } from './common-options.js';
import { printRefusal } from './json-output.js';
import { IDEMPOTENCY_KEY, MESSAGE_OPTIONS, RELAY_OK, WAIT } from './message-options.js';
import { envTraceContext } from '../script-kit/trace-env.js';

/**
 * Where a new message goes: its dest queue, or `relay` for a remote dest when relaying is allowed (spec §11.1).
 * A pool dest needs no --relay-ok: it can only reach hosts the operator joined to this host's fleet, never a URL mistyped.
 */
function destQueue(dest: string, opts: Options, relays: boolean): string {
  if (!isRelayedDest(dest)) return checkQueueName(dest, 'dest');
  if (!relays) throw usage(`--dest: expected a local queue name (single_que does not relay), received ${shown(dest)}`);
  const relayOk = opts['relay-ok'];
  if (isRemoteUrl(dest) && (relayOk === undefined || relayOk === false)) {
    throw usage(`cannot relay message to ${dest}: add --relay-ok to send it through the local relay queue`);
  }
  return 'relay';
}

/** sendmesg, prepmesg, single_que: the message options, and `--wait` for the two that queue the message. */
function create(command: 'create_message' | 'prep_message' | 'single_que', spec: Omit<CommandSpec, 'options'>): RqCommand {
  const relays = command !== 'single_que';
  const waits = command !== 'prep_message';
  return {
    ...spec,
    // single_que takes --relay-ok as the classic tool did, to refuse an http dest by name.
    options: [...MESSAGE_OPTIONS, RELAY_OK, IDEMPOTENCY_KEY, ...(waits ? [WAIT] : []), ...(command === 'create_message' ? [FROM_FILE] : [])],
    run: async ({ opts, root, io }) => {
      const fields = messageFields(opts, () => envTraceContext(io.env, (problem) => io.stderr(`rq: ${problem}; sent without it`)));
      const wait = waits ? waitOpt(opts, 'wait') : undefined;
      const queue = destQueue(fields.dest as string, opts, relays);
      const file = command === 'create_message' ? stringOpt(opts, 'from-file', 'a file of messages, or - for stdin') : undefined;
      if (file !== undefined) {
        // Each message of the file carries its own key and is waited for with rq wait.
        if (fields.idempotency_key !== undefined || wait !== undefined)
          throw usage('--from-file: expected neither --idempotency-key nor --wait (put idempotency_key in each message; rq wait takes the ids printed)');
        const sent = await sendFromFile({ file, queue, root, defaults: fields, io });
        if (sent === 0) await notePool(root, fields.dest as string, io);
        return sent;
      }
      const reply = await ask(root, queue, (c) => c.create(fields, command));
      io.stdout(replyLine(reply));
      if (reply.ok) await notePool(root, fields.dest as string, io, command === 'prep_message');
      if (!reply.ok || wait === undefined) return reply.ok ? 0 : 1;
      // The reply's value is the new message's full id; its last part is the id.
      return waitAndReport(root, queue, String(reply.value).split('/').pop()!, wait, io);
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

/** What `--json` prints for an ok reply of a read command on one message: `{queue, msg_id, …}`. */
type JsonShow = (value: unknown) => Record<string, unknown>;

/** A command on one message: `<msg_id>` or `--msg_id` names it; `show` renders an ok reply; a read command's `json` its document. */
function onMessage(
  command: keyof typeof BY_COMMAND,
  summary: string,
  example: string,
  show: (value: Record<string, unknown>) => string[] = () => [],
  json?: JsonShow,
): RqCommand {
  return {
    summary,
    args: MSG_ARG,
    options: json ? [MSG_ID_OR_ARG, JSON_FLAG] : [MSG_ID_OR_ARG],
    examples: [`rq ${example} --msg_id http://127.0.0.1:3333/q/test/20261121.1938.16.662.2269494`, `rq ${example} 20261121.1938.16.662.2269494`],
    run: async ({ opts, root, io }) => {
      const target = await messageTarget(opts, root);
      const reply = await ask(root, target.queue, (c) => BY_COMMAND[command](c, target.id));
      if (json && flagOpt(opts, 'json')) {
        if (!reply.ok) return printRefusal(io, reply, true);
        io.stdout(JSON.stringify({ queue: target.queue, msg_id: target.id, ...json(reply.value) }));
        return 0;
      }
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
  summary: 'attach a file to a prepared message (one made by prepmesg)',
  args: MSG_ARG,
  options: [
    MSG_ID_OR_ARG,
    { name: 'pathname', arg: 'FILE', required: true, expected: 'the path of a file to attach', help: 'the file to attach (relative to the working directory)' },
    { name: 'name', arg: 'NAME', help: "the attachment's name (default: the file's name)" },
    { name: 'local_fs_only', kind: 'either', help: 'accepted for the classic tool; rq always attaches from the local file system' },
  ],
  examples: ['rq attachmesg --msg_id http://127.0.0.1:3333/q/test/20261121.1938.16.662.2269494 --pathname report.csv'],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const pathname = pathnameOpt(opts, io.cwd);
    const name = stringOpt(opts, 'name', 'an attachment name');
    if (!fs.existsSync(queuePaths(root, target.queue).dir)) throw RqError.of('RQ_ERR_NO_SUCH_QUEUE', target.queue);
    checkAttachment(pathname);
    const reply = await ask(root, target.queue, (c) => c.attach(target.id, pathname, name));
    io.stdout(`${replyLine(reply)} for Message: ${target.given} attachment`);
    return reply.ok ? 0 : 1;
  },
};

/** A message's attachments as get_message has them: name → {md5, size, path}. */
function attachmentsOf(msg: Record<string, unknown>): [string, { md5?: unknown; size?: unknown; path?: unknown; type?: unknown }][] {
  return Object.entries((msg._attachments ?? {}) as Record<string, { md5?: unknown; size?: unknown; path?: unknown; type?: unknown }>);
}

/**
 * `<name> <md5> <size> <path>` per attachment, after the count. Four fields always: `-` where rq
 * has no md5 or size, and `(fifo)`, `(symlink)`, ... in the md5 column for what is not a regular file.
 */
function attachmentLines(msg: Record<string, unknown>): string[] {
  const atts = attachmentsOf(msg);
  const md5Of = (a: { md5?: unknown; type?: unknown }) => (typeof a.type === 'string' ? `(${a.type})` : typeof a.md5 === 'string' ? a.md5 : '-');
  return [`ok ${atts.length}`, ...atts.map(([n, a]) => `${n} ${md5Of(a)} ${typeof a.size === 'number' ? a.size : '-'} ${a.path}`)];
}

const asRecord = (v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

const verifyRules: RqCommand = {
  summary: 'check an rq_router rules file: prints ok, or fail bad router rules file',
  options: [
    { name: 'path', arg: 'FILE', required: true, expected: 'the path of an rq_router rules file', help: 'the rules file to check' },
    { name: 'verbose', kind: 'flag', help: 'print each rule first' },
  ],
  examples: ['rq verify_rules --path config/rq_router_rules.rb --verbose'],
  needsRoot: false,
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
  sendmesg: create('create_message', {
    summary: 'send a message to a queue (or, with --relay-ok, to another host through the relay queue)',
    examples: ['rq sendmesg --dest test --param1 done', 'rq sendmesg --dest build --param1 release --tags release-42 --max_retries 3 --wait=600'],
    notes: ['With --wait: exit 0 done or relayed, 1 err, 4 timed out, 6 deleted (see rq wait --help).'],
  }),
  prepmesg: create('prep_message', {
    summary: 'create a message in prep, to attach files to before commitmesg',
    examples: ['rq prepmesg --dest test --param1 done'],
  }),
  attachmesg,
  commitmesg: onMessage('commit_message', 'queue a prepared message', 'commitmesg'),
  statusmesg: onMessage(
    'get_message_status',
    "print a message's status",
    'statusmesg',
    (v) => [`ok ${v.status}`],
    (v) => ({ state: asRecord(v).state, status: asRecord(v).status }),
  ),
  state: onMessage('get_message_state', "print a message's state (prep, que, run, done, relayed or err)", 'state', undefined, (v) => ({ state: v })),
  statuscountmesg: onMessage(
    'get_message',
    'print how many times a message was resent',
    'statuscountmesg',
    (v) => [`ok ${v.count ?? 0}`],
    (v) => ({ count: asRecord(v).count ?? 0 }),
  ),
  attachstatusmesg: onMessage('get_message', "list a message's attachments: name md5 size path", 'attachstatusmesg', attachmentLines, (v) => ({
    attachments: attachmentsOf(asRecord(v)).map(([name, a]) => ({ name, md5: a.md5, size: a.size, path: a.path })),
  })),
  single_que: create('single_que', {
    summary: 'send a message unless the queue already has one with the same params waiting (local dest only)',
    examples: ['rq single_que --dest test --param1 done'],
  }),
  clone: onMessage('clone_message', 'copy a done, relayed or err message into the queue again', 'clone'),
  verify_rules: verifyRules,
  ...LIFECYCLE_COMMANDS,
  ...LIST_COMMANDS,
  ...BULK_COMMANDS,
  ...DEPENDS_LIMITS_COMMANDS,
  ...TAG_COMMANDS,
  ...TAGGED_COMMANDS,
  ...STATS_COMMANDS,
  ...WAIT_COMMANDS,
  ...BROWSE_COMMANDS,
  ...TAIL_COMMANDS,
  ...OPERATOR_COMMANDS,
  ...DOCTOR_COMMANDS,
  ...FLEET_COMMANDS,
  ...VERSION_COMMANDS,
};
