// The rq tool's `running` and `waiting` (rq-beyond §B1.10): what a queue runs now and what it holds back, one line per message.
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import type { RunningEntry, WaitingEntry } from '../ipc/run-lists.js';
import { ask } from './queue-ask.js';
import { printRefusal } from './json-output.js';
import type { CommandContext, RqCommand } from './rq-command.js';
import type { CommandSpec } from './command-spec.js';
import { JSON_FLAG, QUEUE_ARG, QUEUE_OR_ARG, limitOption } from './common-options.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt } from './rq-options.js';
import { isoTime } from '../message/iso-time.js';

/** `ok <n>` then one line per entry (or the JSON array with `--json`); exit 0 iff the queue said ok. */
function listing<E extends { msg_id: string }>(
  name: string,
  spec: CommandSpec,
  call: (c: QueueClient, opts: Options) => Promise<Answer<E[]>>,
  line: (e: E) => string,
  sayHeld = false,
): RqCommand {
  return {
    ...spec,
    args: QUEUE_ARG,
    run: async ({ opts, root, io }) => {
      const queue = checkQueueName(requiredOpt(opts, 'queue', `a queue name (rq ${name} <queue>)`), 'queue');
      const json = flagOpt(opts, 'json');
      const a = await ask(root, queue, (c) => call(c, opts));
      if (!a.ok) return printRefusal(io, a, json);
      if (json) io.stdout(JSON.stringify(a.value));
      else for (const l of [`ok ${a.value.length}`, ...a.value.map((e) => `${queue}/${e.msg_id} ${line(e)}`)]) io.stdout(l);
      if (sayHeld && !json) await tellHeld(root, queue, io);
      return 0;
    },
  };
}

/**
 * A queue in SCRIPTERROR or DISK FULL holds its ready messages too, which `waiting` does not list
 * (they wait for no reason of their own): one stderr line says so, and why, under the list.
 */
async function tellHeld(root: string, queue: string, io: CommandContext['io']): Promise<void> {
  const d = await ask(root, queue, (c) => c.statusDetail()).catch(() => null);
  if (d?.ok && d.value.reason) io.stderr(`rq: queue ${queue} is ${d.value.status}: ${d.value.reason}; its ready messages wait for it too`);
}

const runningLine = (e: RunningEntry) =>
  `pid ${e.pid} attempt ${e.attempt} started ${e.started_at} last_beat ${e.last_beat} silent ${e.silent_s}s deadline ${e.deadline ?? 'none'}${e.limit === undefined ? '' : ` limit ${e.limit}`}`;

/** The reason first (the word `--reason` takes), then what is awaited. */
function waitingLine(e: WaitingEntry): string {
  if (e.reason === 'delayed') return `delayed due ${isoTime(e.due * 1000) ?? e.due}`;
  if (e.reason === 'limit') return `limit ${e.key} ${e.position === null ? 'asking rq-mgr' : e.position === 0 ? 'granted' : `position ${e.position}`}`;
  if (e.reason === 'dependencies') return `dependencies on ${e.waiting_on.join(',')}`;
  return `coalesced into ${e.into}`;
}

export const LIST_COMMANDS: Record<string, RqCommand> = {
  running: listing(
    'running',
    {
      summary: 'list the running messages of a queue: pid, attempt, start, last sign of life, deadline',
      options: [QUEUE_OR_ARG, JSON_FLAG],
      examples: ['rq running slow', 'rq running --queue slow --json'],
    },
    (c) => c.running(),
    runningLine,
  ),
  waiting: listing(
    'waiting',
    {
      summary: 'list the queued messages that are not ready and why (delayed, coalesced, dependencies, limit)',
      options: [
        QUEUE_OR_ARG,
        { name: 'reason', arg: 'REASON', help: 'only those waiting for this: delayed, coalesced, dependencies or limit' },
        limitOption(10_000, 1000),
        JSON_FLAG,
      ],
      examples: ['rq waiting deploy --reason dependencies'],
    },
    (c, opts) => c.waiting({ reason: stringOpt(opts, 'reason', 'a reason'), limit: stringOpt(opts, 'limit', 'a count') }),
    waitingLine,
    true,
  ),
};
