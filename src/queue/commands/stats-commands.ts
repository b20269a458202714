// The queue socket's statistics commands (rq-beyond §B15.3, §B15.4, §B16): stats, metrics, failed; all read-only, answered while DOWN.
import { RqError, invalidField } from '../../errors.js';
import { type Args, MAX_PAGE, countArg, offsetArg } from './command-args.js';
import type { Queue } from '../queue.js';

const DATE = /^(\d{4})(\d{2})(\d{2})$/;
export const GROUP_EXPECTED = 'a failure group: an outcome, an error class such as ValueError, or a failure kind (1-64 characters, no blank or colon)';
const GROUP = /^[^\s:]{1,64}$/;

/** A `YYYYMMDD` that names a real day. */
export function dateArg(args: Args): string | undefined {
  const v = args.date;
  if (v === undefined || v === null || v === '') return undefined;
  const m = typeof v === 'string' ? DATE.exec(v) : null;
  const real = m && new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])).toISOString().slice(0, 10) === `${m[1]}-${m[2]}-${m[3]}`;
  if (!real) throw invalidField('date', 'a UTC day as YYYYMMDD, such as 20261121', v);
  return v as string;
}

/** The `group` of `failed` and `requeue_errs`, or undefined when not given. */
export function groupArg(args: Args): string | undefined {
  const v = args.group;
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string' || !GROUP.test(v)) throw invalidField('group', GROUP_EXPECTED, v);
  return v;
}

export const STATS_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  stats: async (q, args) => ['ok', await q.stats.reply(dateArg(args))],
  metrics: async (q) => ['ok', await q.stats.metrics(q.status(), q.config.num_workers)],
  failed: async (q, args) => {
    const group = groupArg(args);
    if (group === undefined) {
      if (args.offset !== undefined || args.limit !== undefined) throw RqError.of('RQ_ERR_LACKING_FIELD', 'group');
      return ['ok', { groups: await q.stats.groups.groups() }];
    }
    return ['ok', await q.stats.groups.page(group, offsetArg(args), countArg(args, 'limit', MAX_PAGE, 25)!)];
  },
};
