// `rq bulk <queue> --op retry|delete|ack|move`: a bulk action in the queue process on the messages matching the filter options (or --ids), counted first, confirmed (--yes, or a y on a terminal), followed to its summary with a progress line on a terminal.
import { RqError, shown } from '../errors.js';
import { BULK_OPS, type BulkJob } from '../ipc/bulk-reply.js';
import type { SearchArgs } from '../ipc/queue-client.js';
import { listFilter, searchArgs } from '../web/list-params.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqCommand } from './rq-command.js';
import { JSON_FLAG, QUEUE } from './common-options.js';
import { EXIT } from './exit-codes.js';
import { type Options, checkQueueName, flagOpt, requiredOpt, stringOpt, usage } from './rq-options.js';

/** How long one status question waits for progress (the socket's reply timeout is 30 s). */
const STATUS_WAIT_MS = 5000;
const VERBS: Record<string, string> = { retry: 'retry', delete: 'delete', ack: 'acknowledge', move: 'move' };

/** The filter options, checked by the same rules as the queue page's parameters (`--state: expected …`). */
function filterOf(opts: Options): SearchArgs {
  const query: Record<string, string> = {};
  for (const k of ['state', 'filter', 'from', 'to'] as const) {
    const v = stringOpt(opts, k, 'a value');
    if (v !== undefined) query[k] = v;
  }
  try {
    const { state, acked, text, created_from, created_to } = searchArgs(listFilter(query));
    return { state, acked, text, created_from, created_to };
  } catch (err) {
    if (err instanceof RqError && err.code === 'RQ_ERR_INVALID_FIELD') throw usage(`--${err.message}`);
    throw err;
  }
}

function idsOf(opts: Options): string[] | undefined {
  const v = stringOpt(opts, 'ids', 'message ids, comma-separated');
  if (v === undefined) return undefined;
  const ids = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) throw usage(`--ids: expected message ids, comma-separated, received ${shown(v)}`);
  return ids;
}

const bulk: RqCommand = {
  summary: 'retry, delete, acknowledge or move every message of a queue that matches a filter (or the given ids), in the queue process',
  args: [{ name: 'queue', option: 'queue', required: true }],
  options: [
    { ...QUEUE, required: false },
    {
      name: 'op',
      arg: 'OP',
      required: true,
      expected: `one of ${BULK_OPS.join(', ')}`,
      help: 'retry (requeue err messages), delete, ack (acknowledge err messages) or move (to --dest)',
    },
    { name: 'state', arg: 'STATE', expected: 'a state', help: 'only messages in this state: prep, que, run, done, err (unacknowledged), relayed, acked' },
    { name: 'filter', arg: 'TEXT', expected: 'a text', help: 'only messages with a field containing TEXT' },
    { name: 'from', arg: 'DATE', expected: 'a UTC date', help: 'only messages created at or after DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM, UTC)' },
    { name: 'to', arg: 'DATE', expected: 'a UTC date', help: 'only messages created before DATE (a bare date: the end of that day)' },
    {
      name: 'ids',
      arg: 'IDS',
      expected: 'message ids, comma-separated',
      help: 'these messages instead of a filter (an acknowledged error with its leading dot)',
    },
    { name: 'dest', arg: 'QUEUE', expected: 'a queue name', help: 'move: the queue to move the messages to' },
    { name: 'yes', kind: 'flag', help: 'do it without asking (required when stdin is not a terminal)' },
    JSON_FLAG,
  ],
  notes: [
    'The queue counts the messages the action applies to first; on a terminal rq asks before changing them, elsewhere it refuses (exit 2) without --yes.',
    'Exit 0 when every message changed, 1 when some were skipped (their reasons are printed), 3 when the queue does not answer.',
  ],
  examples: [
    'rq bulk reports --op retry --state err --yes',
    'rq bulk reports --op move --dest reports2 --filter customer-17 --from 2026-11-01',
    'rq bulk reports --op ack --state err --to 2026-11-20 --yes',
  ],
  run: async ({ opts, root, io }) => {
    const queue = checkQueueName(requiredOpt(opts, 'queue', 'a queue name'), 'queue');
    const op = requiredOpt(opts, 'op', `one of ${BULK_OPS.join(', ')}`);
    if (!(BULK_OPS as readonly string[]).includes(op)) throw usage(`--op: expected one of ${BULK_OPS.join(', ')}, received ${shown(op)}`);
    const dest = stringOpt(opts, 'dest', 'a queue name');
    if (op === 'move' && dest === undefined) throw usage('--dest: a move needs the queue to move to (--dest QUEUE)');
    const ids = idsOf(opts);
    const filter = filterOf(opts);
    if (ids && Object.values(filter).some((v) => v !== undefined))
      throw usage('--ids: give either --ids or filter options (--state, --filter, --from, --to), not both');
    const json = flagOpt(opts, 'json');
    const args = { op, ...(ids ? { ids } : { filter }), ...(dest === undefined ? {} : { dest }) };

    const counted = await ask(root, queue, (c) => c.bulk({ ...args, dry_run: true }));
    if (!counted.ok) {
      io.stdout(replyLine(counted));
      return EXIT.fail;
    }
    const count = (counted.value as { count: number }).count;
    const what = `${VERBS[op]} ${count} ${count === 1 ? 'message' : 'messages'} of ${queue}${dest ? ` to ${dest}` : ''}`;
    if (count === 0) {
      io.stdout(json ? JSON.stringify({ op, total: 0, changed: 0, skipped: {} }) : 'ok 0');
      return EXIT.ok;
    }
    if (!flagOpt(opts, 'yes')) {
      if (!io.tty?.stdin || !io.confirm) throw usage(`bulk: refusing to ${what} without --yes (stdin is not a terminal to ask on)`);
      if (!(await io.confirm(`${what[0].toUpperCase()}${what.slice(1)}? [y/N] `))) {
        io.stderr('rq: bulk: nothing changed');
        return EXIT.fail;
      }
    }

    const started = await ask(root, queue, (c) => c.bulk(args));
    if (!started.ok) {
      io.stdout(replyLine(started));
      return EXIT.fail;
    }
    let job = started.value as BulkJob;
    const progress = io.tty?.stderr && io.progress ? io.progress : undefined;
    while (job.state !== 'finished') {
      progress?.(`${VERBS[op]}: ${job.done}/${job.total} (${Math.floor((job.done / job.total) * 100)}%) changed ${job.changed}`);
      const seen = job.done;
      const next = await ask(root, queue, (c) => c.bulkStatus(job.job, seen, STATUS_WAIT_MS));
      if (!next.ok) {
        io.stdout(replyLine(next));
        return EXIT.fail;
      }
      job = next.value as BulkJob;
    }
    progress?.('');
    const skipped = Object.entries(job.skipped);
    if (json) io.stdout(JSON.stringify(job));
    else {
      io.stdout(`${skipped.length ? 'fail' : 'ok'} ${job.changed}`);
      for (const [reason, n] of skipped) io.stdout(`skipped ${n}: ${reason} (e.g. ${(job.examples[reason] ?? []).join(' ')})`);
    }
    return skipped.length ? EXIT.fail : EXIT.ok;
  },
};

export const BULK_COMMANDS: Record<string, RqCommand> = { bulk };
