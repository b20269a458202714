// `rq queues` and `rq ls`: the root's queues with their status and counts, and one queue's messages by state, paged (the queue's search command).
import { shown } from '../errors.js';
import { STATES, type State } from '../message/states.js';
import type { QueueMetrics } from '../ipc/stats-reply.js';
import { orderQueues } from '../message/queue-order.js';
import { askEvery } from './fan-out.js';
import { printFleetQueues } from './fleet-queues.js';
import { ask } from './queue-ask.js';
import { printRefusal } from './json-output.js';
import type { RqCommand } from './rq-command.js';
import { JSON_FLAG, OFFSET, QUEUE, limitOption } from './common-options.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt, wholeOpt, usage } from './rq-options.js';

const MAX_PAGE = 1000;
const MAX_OFFSET = 10_000_000;
const DEFAULT_LIMIT = 50;
const COUNTS = ['prep', 'que', 'run', 'done', 'relayed', 'err', 'err_acked'] as const;

type Row = { queue: string; status: string; counts: QueueMetrics['live']['counts'] | null; reason?: string; problem?: string };

/**
 * `<queue> <STATUS> prep 0 que 2 run 1 done 40 relayed 0 err 1 err_acked 0`, then ` - <why>` when
 * the queue cannot run scripts (SCRIPTERROR, DISK FULL); a queue that does not answer is UNREACHABLE.
 */
function queueLine(r: Row): string {
  const line = r.counts ? `${r.queue} ${r.status} ${COUNTS.map((k) => `${k} ${r.counts![k]}`).join(' ')}` : `${r.queue} ${r.status}`;
  return r.reason ? `${line} - ${r.reason}` : line;
}

/** Statuses in which a queue runs no script for a reason it can give (status_detail). */
const HELD = new Set(['SCRIPTERROR', 'DISK FULL']);

/** The row with why its queue runs no script, asked only of a queue in SCRIPTERROR or DISK FULL. */
async function withReason(root: string, row: Row): Promise<Row> {
  if (!HELD.has(row.status)) return row;
  const d = await ask(root, row.queue, (c) => c.statusDetail()).catch(() => null);
  return d?.ok && d.value.reason ? { ...row, reason: d.value.reason } : row;
}

const queues: RqCommand = {
  summary: "list the root's queues with their status (UP, PAUSE, DOWN, SCRIPTERROR, DISK FULL) and message counts",
  options: [{ name: 'fleet', kind: 'flag', help: 'list the queues of every host of the fleet instead, one line per host and queue' }, JSON_FLAG],
  notes: [
    'A queue in SCRIPTERROR or DISK FULL ends its line with - <why> (reason in --json).',
    'A queue whose process does not answer is listed as UNREACHABLE, named on stderr, and makes the first line fail <n> (exit 1).',
    'When none answers and rq-mgr is not running either, that is the one line on stderr (exit 3).',
    '--fleet asks rq-mgr for its view of the fleet (docs/fleet.md): ok <n>, then <host>/<queue> <STATUS> ready <n> running <n> workers <n>;',
    'fail <n> over the hosts as last seen while etcd does not answer (exit 1); exit 1 with the reason on a host without a fleet.',
  ],
  examples: ['rq queues', 'rq queues --json', 'rq queues --fleet'],
  run: async ({ opts, root, io }) => {
    const json = flagOpt(opts, 'json');
    if (flagOpt(opts, 'fleet')) return printFleetQueues(root, io, json);
    // metrics is answered while a queue is DOWN, so its counts still show.
    const every = await askEvery(root, (c) => c.metrics());
    const counts = new Map(every.answers.map((a) => [a.queue, a.value]));
    const problems = new Map(every.failures.map((f) => [f.queue, f.problem]));
    // The dashboard's order, one for every listing of queues: the user's by name, then the built-ins.
    const rows = await Promise.all(
      orderQueues(every.asked).map((queue): Promise<Row> | Row => {
        const m = counts.get(queue);
        return m
          ? withReason(root, { queue, status: m.status, counts: m.live.counts })
          : { queue, status: 'UNREACHABLE', counts: null, problem: problems.get(queue) };
      }),
    );
    for (const r of rows) if (r.problem) io.stderr(`rq: ${r.problem}`);
    const status = rows.some((r) => r.problem) ? 'fail' : 'ok';
    if (json) io.stdout(JSON.stringify(rows.map(({ queue, status: s, counts, reason }) => ({ queue, status: s, counts, ...(reason ? { reason } : {}) }))));
    else for (const line of [`${status} ${rows.length}`, ...rows.map(queueLine)]) io.stdout(line);
    return status === 'ok' ? 0 : 1;
  },
};

function stateOpt(opts: Options): State | undefined {
  const expected = `one of ${STATES.join(', ')}`;
  const v = stringOpt(opts, 'state', expected);
  if (v !== undefined && !(STATES as readonly string[]).includes(v)) throw usage(`--state: expected ${expected}, received ${shown(v)}`);
  return v as State | undefined;
}

const ls: RqCommand = {
  summary: "list a queue's messages, newest first, optionally of one state, a page at a time",
  args: [{ name: 'queue', option: 'queue', required: true }],
  options: [
    { ...QUEUE, required: false },
    { name: 'state', arg: 'STATE', expected: `one of ${STATES.join(', ')}`, help: `only messages in this state (${STATES.join(', ')})` },
    limitOption(MAX_PAGE, DEFAULT_LIMIT),
    OFFSET,
    JSON_FLAG,
  ],
  notes: ['Prints ok <total matching>, then <queue>/<id> <state> per message (acked after an acknowledged error), newest first.'],
  examples: ['rq ls test --state err --limit 20', 'rq ls test --offset 50 --limit 50 --json'],
  run: async ({ opts, root, io }) => {
    const queue = checkQueueName(requiredOpt(opts, 'queue', 'a queue name (rq ls <queue>)'), 'queue');
    const query = { state: stateOpt(opts), limit: wholeOpt(opts, 'limit', 1, MAX_PAGE, DEFAULT_LIMIT), offset: wholeOpt(opts, 'offset', 0, MAX_OFFSET, 0) };
    const json = flagOpt(opts, 'json');
    const a = await ask(root, queue, (c) => c.search(query));
    if (!a.ok) return printRefusal(io, a, json);
    if (json) io.stdout(JSON.stringify(a.value));
    else
      for (const line of [`ok ${a.value.total}`, ...a.value.messages.map((m) => `${queue}/${m.msg_id} ${m.state}${m.acked ? ' acked' : ''}`)]) io.stdout(line);
    return 0;
  },
};

export const BROWSE_COMMANDS: Record<string, RqCommand> = { queues, ls };
