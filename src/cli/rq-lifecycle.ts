// The rq tool's lifecycle commands (rq-beyond §B1.10): cancel, requeue, reschedule, priority and history.
import { shown } from '../errors.js';
import { TAG_EXPECTED } from '../message/tags.js';
import type { Answer } from '../ipc/answer.js';
import type { HistoryLine } from '../ipc/history-line.js';
import { detailWords, reasonWords } from '../ipc/history-words.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { actor, ask, failureLines, replyLine } from './queue-ask.js';
import type { CommandContext, RqCommand } from './rq-command.js';
import { cancelByTag } from './rq-tags.js';
import type { CommandSpec, OptionSpec } from './command-spec.js';
import { JSON_FLAG, MSG_ARG, MSG_ID, MSG_ID_OR_ARG, REASON, limitOption } from './common-options.js';
import { messageTarget } from './message-target.js';
import { refusalDoc } from './json-output.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt, usage } from './rq-options.js';

/**
 * One history line as people read it: `<at> run→err dispatcher outcome failed, exit 3 after 0.143s - <reason>`, its
 * details apart by commas as the Timeline has them; the step stays one word for scripts that split it.
 */
export function historyText(l: HistoryLine): string {
  const step = l.event ?? `${l.from ?? 'create'}→${l.to ?? '?'}`;
  const reason = reasonWords(l);
  return [l.at, step, l.actor ?? '', detailWords(l).join(', '), reason ? `- ${reason}` : ''].filter(Boolean).join(' ');
}

async function printed(ctx: CommandContext, run: (c: CommandContext) => Promise<{ ok: boolean; lines: string[] }>): Promise<number> {
  const r = await run(ctx);
  for (const line of r.lines) ctx.io.stdout(line);
  return r.ok ? 0 : 1;
}

/**
 * A command on one message whose ok or fail reply is printed as the classic line: `read` checks its
 * options before anything is sent, `call` asks the queue with them and who asked.
 */
function onMessage<P>(
  spec: CommandSpec,
  read: (opts: Options) => P,
  call: (c: QueueClient, id: string, p: P, by: string) => Promise<Answer<unknown>>,
): RqCommand {
  return {
    ...spec,
    run: (ctx) =>
      printed(ctx, async ({ opts, root, io }) => {
        const target = await messageTarget(opts, root);
        const p = read(opts);
        const a = await ask(root, target.queue, (c) => call(c, target.id, p, actor(io.env)));
        return { ok: a.ok, lines: [replyLine(a)] };
      }),
  };
}

/** `--due` / `--delay` as text; the queue checks them (one of them, not both). */
function dueOpts(opts: Options, required: boolean): { due?: string; delay?: string } {
  const due = stringOpt(opts, 'due', 'epoch seconds');
  const delay = stringOpt(opts, 'delay', 'seconds');
  if (required && due === undefined && delay === undefined) throw usage('--due or --delay: expected one of them, received neither');
  return { due, delay };
}

/** `--wait` (60 s) or `--wait=S`: how long to wait for the message to finish. */
function waitOpt(opts: Options): number | undefined {
  const v = opts.wait;
  if (v === undefined || v === false) return undefined;
  if (v === true) return DEFAULT_WAIT_S;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 86_400)
    throw usage(`--wait: expected whole seconds from 1 to 86400, received ${shown(v)}`);
  return Number(v);
}

const DEFAULT_WAIT_S = 60;

/**
 * `rq cancel`: the cancel's line, then with `--wait` the final status once the message has finished
 * (`ok err - CANCELLED - …`); with `--tag`, every message with the tag (rq-tags.ts).
 */
const DUE: OptionSpec = { name: 'due', arg: 'EPOCH', expected: 'epoch seconds', help: 'when it may run (epoch seconds)' };
const DELAY: OptionSpec = { name: 'delay', arg: 'SECONDS', expected: 'seconds', help: 'run it this many seconds from now' };
const EXAMPLE_ID = 'http://127.0.0.1:3399/q/hung/20261125.1835.26.430.2302965';

/** `rq cancel <msg_id>`, `rq requeue <msg_id>`: the word is optional, as --tag or --queue may stand instead. */
const MSG_OR_OTHER = [{ name: 'msg_id', option: 'msg_id' }];

const cancel: RqCommand = {
  summary: 'stop a message for good (prep and que end in err at once, a running one gets TERM), or every message with a tag',
  args: MSG_OR_OTHER,
  options: [
    { ...MSG_ID, required: false, help: `${MSG_ID.help} (or --tag)` },
    REASON,
    { name: 'purge', kind: 'flag', help: 'delete the message instead of keeping it in err' },
    { name: 'wait', kind: 'either', arg: 'SECONDS', help: 'print a second line once it has finished: ok <final status> (default 60 s, 1-86400)' },
    { name: 'tag', arg: 'T', expected: TAG_EXPECTED, help: 'cancel every prep, que and running message with this tag instead of one message' },
    { name: 'queue', arg: 'QUEUE', expected: 'a queue name', help: 'with --tag: only this queue (default: every queue)' },
  ],
  examples: [`rq cancel --msg_id ${EXAMPLE_ID} --reason 'wrong input' --wait`, "rq cancel --tag release-42 --reason 'release withdrawn'"],
  run: (ctx) =>
    ctx.opts.tag !== undefined
      ? cancelByTag(ctx)
      : printed(ctx, async ({ opts, root, io }) => {
          const target = await messageTarget(opts, root);
          const reason = stringOpt(opts, 'reason', 'a reason text');
          const purge = flagOpt(opts, 'purge') || undefined;
          const wait = waitOpt(opts);
          const a = await ask(root, target.queue, (c) => c.cancel(target.id, { reason, purge, actor: actor(io.env) }));
          if (!a.ok || wait === undefined) return { ok: a.ok, lines: [replyLine(a)] };
          // The socket waits on the queue's events; the client allows a little more than the wait itself.
          const w = await ask(root, target.queue, (c) => c.waitFinished(target.id, wait), (wait + 5) * 1000);
          // A purged prep or que message is gone before the reply, a purged run maybe before the wait arrives.
          if (!w.ok && purge && w.code === 'RQ_ERR_NO_SUCH_MSG') return { ok: true, lines: [replyLine(a), 'ok deleted'] };
          return { ok: w.ok, lines: [replyLine(a), w.ok ? `ok ${w.value.status}` : replyLine(w)] };
        }),
};

const requeueOne = onMessage(
  {
    summary: 'send an err message back to the que under its own id, or every err message of a queue',
    args: MSG_OR_OTHER,
    options: [
      { ...MSG_ID, required: false, help: `${MSG_ID.help} (or --queue)` },
      { name: 'reset', kind: 'flag', help: 'also zero its failure and interrupt counts' },
      DUE,
      DELAY,
      { name: 'queue', arg: 'QUEUE', expected: 'a queue name', help: 'requeue every unacknowledged err message of this queue, oldest first' },
      {
        name: 'outcome',
        arg: 'O',
        expected: 'an outcome',
        help: 'with --queue: only those with this outcome (failed, exhausted, fatal, expired, cancelled, dependency_failed, interrupted)',
      },
      { name: 'group', arg: 'G', help: 'with --queue: only this failure group (as rq failed lists them)' },
      { ...limitOption(1_000_000, 1_000_000), help: 'with --queue: at most N messages' },
    ],
    examples: [`rq requeue --msg_id ${EXAMPLE_ID} --delay 3600`, 'rq requeue --queue failing --outcome exhausted --limit 10'],
  },
  (opts) => ({ reset: flagOpt(opts, 'reset'), ...dueOpts(opts, false) }),
  (c, id, p, by) => c.requeue(id, { ...p, actor: by }),
);

/** `rq requeue --queue Q`: every unacknowledged err message (of one outcome), oldest first: `ok <n> requeued`. */
const requeue: RqCommand = {
  ...requeueOne,
  run: (ctx) => {
    const { opts } = ctx;
    if (opts.queue === undefined) return requeueOne.run(ctx);
    return printed(ctx, async ({ root, io }) => {
      if (opts.msg_id !== undefined) throw usage('--msg_id and --queue: expected one of them, received both');
      for (const k of ['reset', 'due', 'delay']) {
        if (opts[k] !== undefined) throw usage(`--${k}: applies to one message (--msg_id); with --queue, every message is requeued as it is, due now`);
      }
      const queue = checkQueueName(requiredOpt(opts, 'queue', 'a queue name'), 'queue');
      const sel = {
        outcome: stringOpt(opts, 'outcome', 'an outcome'),
        group: stringOpt(opts, 'group', 'a failure group'),
        limit: stringOpt(opts, 'limit', 'a count'),
      };
      const a = await ask(root, queue, (c) => c.requeueErrs({ ...sel, actor: actor(io.env) }));
      for (const line of failureLines(a)) io.stderr(line);
      return { ok: a.ok, lines: [a.ok ? `ok ${a.value} requeued` : replyLine(a)] };
    });
  },
};

export const LIFECYCLE_COMMANDS: Record<string, RqCommand> = {
  cancel,
  requeue,
  reschedule: onMessage(
    {
      summary: 'give a prep or que message a new due time',
      args: MSG_ARG,
      options: [MSG_ID_OR_ARG, DUE, DELAY],
      notes: ['Give --due or --delay, not both.'],
      examples: [`rq reschedule --msg_id ${EXAMPLE_ID} --delay 600`],
    },
    (opts) => dueOpts(opts, true),
    (c, id, p, by) => c.reschedule(id, { ...p, actor: by }),
  ),
  priority: onMessage(
    {
      summary: 'set the priority of a prep or que message; lower runs first',
      args: MSG_ARG,
      options: [
        MSG_ID_OR_ARG,
        { name: 'priority', arg: 'N', required: true, expected: 'a whole number from -1000000 to 1000000', help: 'the new priority, -1000000 to 1000000' },
      ],
      examples: [`rq priority --msg_id ${EXAMPLE_ID} --priority -5`],
    },
    (opts) => {
      const priority = stringOpt(opts, 'priority', 'a whole number from -1000000 to 1000000');
      if (priority === undefined) throw usage('--priority: expected a whole number from -1000000 to 1000000, received nothing');
      return priority;
    },
    (c, id, priority, by) => c.setPriority(id, priority, by),
  ),
  history: {
    summary: "print a message's moves and events, oldest first",
    args: MSG_ARG,
    options: [MSG_ID_OR_ARG, JSON_FLAG],
    examples: [`rq history --msg_id ${EXAMPLE_ID}`, 'rq history 20261125.1835.26.430.2302965'],
    run: (ctx) =>
      printed(ctx, async ({ opts, root }) => {
        const target = await messageTarget(opts, root);
        const a = await ask(root, target.queue, (c) => c.history(target.id));
        const json = flagOpt(opts, 'json');
        if (!a.ok) return { ok: false, lines: [json ? JSON.stringify(refusalDoc(a)) : replyLine(a)] };
        if (json) return { ok: true, lines: [JSON.stringify(a.value)] };
        return { ok: true, lines: [`ok ${a.value.length}`, ...a.value.map(historyText)] };
      }),
  },
};
