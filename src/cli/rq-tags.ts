// The rq tool's tag commands (rq-beyond §B9, §B1.10): tag, track, untrack, tags, and cancel --tag.
import { shown } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { TRACK_TAG } from '../message/tags.js';
import { MAX_REASON } from '../queue/commands/command-args.js';
import { askEvery, reportProblems } from './fan-out.js';
import { actor, ask, failureLines, replyLine } from './queue-ask.js';
import { printRefusal } from './json-output.js';
import type { CommandContext, RqCommand } from './rq-command.js';
import type { OptionSpec } from './command-spec.js';
import { JSON_FLAG, MSG_ARG, MSG_ID_OR_ARG, QUEUE_ARG, QUEUE_OR_ARG } from './common-options.js';
import { messageTarget } from './message-target.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt, tagListOpt, tagOpt, usage } from './rq-options.js';

/** A message's tags on one line: `a,b`, or `none`. */
export const tagsText = (tags: readonly string[]): string => (tags.length ? tags.join(',') : 'none');

/** A change of one message's tags: `ok <its tags now>`, or the queue's refusal. */
function tagging(summary: string, example: string, change: (opts: Options) => { add?: string[]; remove?: string[] }, extra: OptionSpec[] = []): RqCommand {
  return {
    summary,
    args: MSG_ARG,
    options: [MSG_ID_OR_ARG, ...extra],
    examples: [example],
    run: async ({ opts, root, io }) => {
      const target = await messageTarget(opts, root);
      const c = change(opts);
      const a = await ask(root, target.queue, (q) => q.tagMessage(target.id, { ...c, actor: actor(io.env) }));
      io.stdout(a.ok ? `ok ${tagsText(a.value)}` : replyLine(a));
      return a.ok ? 0 : 1;
    },
  };
}

const tag = tagging(
  'add tags to a message and remove others, in any state; prints its tags',
  'rq tag --msg_id build/20261125.2312.22.376.2245269 --add urgent --remove linux',
  (opts) => {
    const add = tagListOpt(opts, 'add');
    const remove = tagListOpt(opts, 'remove');
    if (!add?.length && !remove?.length) throw usage('--add or --remove: expected at least one tag, received neither');
    return { add, remove };
  },
  [
    { name: 'add', arg: 'a,b', expected: 'a comma-separated list of tags', help: 'tags to add, comma-separated' },
    { name: 'remove', arg: 'a,b', expected: 'a comma-separated list of tags', help: 'tags to remove, comma-separated' },
  ],
);

/** Tags by how many messages carry them, then by name. */
function byCount(counts: Record<string, number>): [string, number][] {
  return Object.entries(counts).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
}

const tags: RqCommand = {
  summary: "list the tags of a queue's messages and how many carry each, most used first",
  args: QUEUE_ARG,
  options: [QUEUE_OR_ARG, JSON_FLAG],
  examples: ['rq tags build', 'rq tags --queue build --json'],
  run: async ({ opts, root, io }) => {
    const queue = checkQueueName(requiredOpt(opts, 'queue', 'a queue name (rq tags <queue>)'), 'queue');
    const json = flagOpt(opts, 'json');
    const a = await ask(root, queue, (c) => c.tags());
    if (!a.ok) return printRefusal(io, a, json);
    const rows = byCount(a.value);
    if (json) io.stdout(JSON.stringify(Object.fromEntries(rows)));
    else for (const line of [`ok ${rows.length}`, ...rows.map(([t, n]) => `${t} ${n}`)]) io.stdout(line);
    return 0;
  },
};

/** Checked as the queue checks it, so that a fan-out refuses it once rather than once per queue. */
function reasonOpt(opts: Options): string | undefined {
  const reason = stringOpt(opts, 'reason', 'a reason text');
  if (reason !== undefined && (reason.length > MAX_REASON || reason.includes('\u0000'))) {
    throw usage(
      `--reason: expected text of at most ${MAX_REASON} characters without NUL, received ${reason.length > MAX_REASON ? `${reason.length} characters` : shown(reason)}`,
    );
  }
  return reason;
}

/**
 * `rq cancel --tag T [--queue Q] [--reason R]`: every prep, que and running message with the tag,
 * of one queue or of every queue (summed): `ok <n> cancelled`. A queue that refuses or does not
 * answer is named on stderr and makes it `fail <n> cancelled` (the others' cancels stand).
 */
export async function cancelByTag({ opts, root, io }: CommandContext): Promise<number> {
  if (opts.msg_id !== undefined) throw usage('--msg_id and --tag: expected one of them, received both');
  for (const k of ['purge', 'wait']) {
    if (opts[k] !== undefined && opts[k] !== false)
      throw usage(`--${k}: applies to one message (--msg_id); with --tag, every prep, que and running message with the tag is cancelled and kept in err`);
  }
  const t = tagOpt(opts);
  const reason = reasonOpt(opts);
  const queue = opts.queue === undefined ? undefined : checkQueueName(requiredOpt(opts, 'queue', 'a queue name'), 'queue');
  const call = (c: QueueClient): Promise<Answer<number>> => c.cancelTagged(t, { reason, actor: actor(io.env) });
  if (queue !== undefined) {
    const a = await ask(root, queue, call);
    io.stdout(a.ok ? `ok ${a.value} cancelled` : replyLine(a));
    for (const line of failureLines(a)) io.stderr(line);
    return a.ok ? 0 : 1;
  }
  const every = await askEvery(root, call);
  const status = reportProblems(io, every.problems);
  io.stdout(`${status} ${every.answers.reduce((n, x) => n + x.value, 0)} cancelled`);
  return status === 'ok' ? 0 : 1;
}

export const TAG_COMMANDS: Record<string, RqCommand> = {
  tag,
  track: tagging(`track a message: add the tag "${TRACK_TAG}"; prints its tags`, 'rq track --msg_id build/20261125.2312.22.376.2245269', () => ({
    add: [TRACK_TAG],
  })),
  untrack: tagging(`stop tracking a message: remove the tag "${TRACK_TAG}"; prints its tags`, 'rq untrack --msg_id build/20261125.2312.22.376.2245269', () => ({
    remove: [TRACK_TAG],
  })),
  tags,
};
