// The rq tool's `stats` and `failed` (rq-beyond §B15, the rq1 `stats` command): a queue's statistics for a UTC day, and its err messages by failure group.
import { RqError, shown } from '../errors.js';
import type { FailureGroupPage } from '../ipc/stats-reply.js';
import { type Args, MAX_PAGE, countArg, offsetArg } from '../queue/commands/command-args.js';
import { groupArg } from '../queue/commands/stats-commands.js';
import { ask } from './queue-ask.js';
import { printRefusal } from './json-output.js';
import type { CommandContext, RqCommand } from './rq-command.js';
import { JSON_FLAG, OFFSET, QUEUE, limitOption } from './common-options.js';
import { type Options, checkQueueName, flagOpt, stringOpt, usage } from './rq-options.js';
import { statsLines } from './stats-lines.js';

/** `rq stats <queue>` or `--queue <queue>`, as the other commands take it. */
function queueArg({ opts, rest = [] }: CommandContext, command: string): string {
  const given = stringOpt(opts, 'queue', 'a queue name');
  if (rest.length > 1) throw usage(`${command}: expected one queue name, received ${rest.map((w) => shown(w)).join(' ')}`);
  if (given !== undefined && rest.length === 1 && rest[0] !== given)
    throw usage(`${command}: the queue is named twice (${shown(rest[0])} and --queue ${shown(given)})`);
  const name = given ?? rest[0];
  if (name === undefined) throw usage(`${command}: expected a queue name (rq ${command} <queue>), received nothing`);
  return checkQueueName(name, 'queue');
}

/** A real UTC day as YYYYMMDD (the queue checks it the same way; here it is refused before any socket is opened). */
function dateOpt(opts: Options): string | undefined {
  const expected = 'a UTC day as YYYYMMDD, such as 20261121';
  const v = stringOpt(opts, 'date', expected);
  if (v === undefined) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(v);
  if (!m || new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])).toISOString().slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}`)
    throw usage(`--date: expected ${expected}, received ${shown(v)}`);
  return v;
}

/** An option read by the queue's own rule for its field, refused as an option (`--offset: expected …`). */
function asOption<T>(read: (args: Args) => T, args: Args): T {
  try {
    return read(args);
  } catch (err) {
    if (err instanceof RqError && err.code === 'RQ_ERR_INVALID_FIELD') throw usage(`--${err.message}`);
    throw err;
  }
}

const stats: RqCommand = {
  summary: "a queue's statistics for a UTC day as key: value lines, with approximate wait and run percentiles",
  args: [{ name: 'queue', option: 'queue', required: true }],
  options: [
    { ...QUEUE, required: false },
    { name: 'date', arg: 'YYYYMMDD', expected: 'a UTC day as YYYYMMDD, such as 20261121', help: 'the UTC day (default: today, with live figures)' },
    JSON_FLAG,
  ],
  examples: ['rq stats reports --date 20261121'],
  run: async (ctx) => {
    const queue = queueArg(ctx, 'stats');
    const date = dateOpt(ctx.opts);
    const json = flagOpt(ctx.opts, 'json');
    const a = await ask(ctx.root, queue, (c) => c.stats(date));
    if (!a.ok) return printRefusal(ctx.io, a, json);
    if (json) ctx.io.stdout(JSON.stringify(a.value));
    else for (const line of statsLines(a.value)) ctx.io.stdout(line);
    return 0;
  },
};

/** Most err messages first, then by name. */
function byCount(groups: Record<string, number>): [string, number][] {
  return Object.entries(groups).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
}

/** `<queue>/<id> <at> <outcome> <failure kind> <last failure text>`; `-` for what a message lacks. */
function failedLine(queue: string, m: FailureGroupPage['messages'][number]): string {
  return [`${queue}/${m.msg_id}`, m.at ?? '-', m.outcome, m.failure ?? '-', ...(m.text ? [m.text.replace(/\s+/g, ' ')] : [])].join(' ');
}

const failed: RqCommand = {
  summary: "a queue's err messages by failure group (outcome, error class or failure kind), or one group's messages, newest first",
  args: [{ name: 'queue', option: 'queue', required: true }],
  options: [
    { ...QUEUE, required: false },
    { name: 'group', arg: 'G', expected: 'a failure group', help: "list this group's messages instead of the groups" },
    OFFSET,
    limitOption(1000, 25),
    JSON_FLAG,
  ],
  examples: ['rq failed reports', 'rq failed reports --group ValueError --limit 10'],
  run: async (ctx) => {
    const { opts, io } = ctx;
    const queue = queueArg(ctx, 'failed');
    const group = asOption(groupArg, { group: stringOpt(opts, 'group', 'a failure group') });
    const paging = { offset: stringOpt(opts, 'offset', 'a whole number'), limit: stringOpt(opts, 'limit', 'a whole number') };
    const json = flagOpt(opts, 'json');
    if (group === undefined) {
      const page = paging.offset !== undefined ? 'offset' : paging.limit !== undefined ? 'limit' : undefined;
      if (page) throw usage(`--${page}: pages one group's messages; give --group G too (rq failed ${queue} lists the groups)`);
      const a = await ask(ctx.root, queue, (c) => c.failed());
      if (!a.ok || !('groups' in a.value)) return printRefusal(io, a, json);
      const rows = byCount(a.value.groups);
      if (json) io.stdout(JSON.stringify(Object.fromEntries(rows)));
      else for (const line of [`ok ${rows.length}`, ...rows.map(([g, n]) => `${g} ${n}`)]) io.stdout(line);
      return 0;
    }
    const offset = asOption(offsetArg, paging);
    const limit = asOption((args) => countArg(args, 'limit', MAX_PAGE), paging);
    const a = await ask(ctx.root, queue, (c) => c.failed({ group, offset, limit }));
    if (!a.ok || !('total' in a.value)) return printRefusal(io, a, json);
    const page = a.value;
    if (json) io.stdout(JSON.stringify(page));
    else for (const line of [`ok ${page.total}`, ...page.messages.map((m) => failedLine(queue, m))]) io.stdout(line);
    return 0;
  },
};

export const STATS_COMMANDS: Record<string, RqCommand> = { stats, failed };
