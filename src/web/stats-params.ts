// The query of the statistics routes (rq-beyond §B15.3, §B15.4): a day, a failure group and its page, checked by the queue's own rules and texts before any socket call, so bad input is a 400 even while the queue process is gone.
import { RqError } from '../errors.js';
import { MAX_PAGE, countArg, offsetArg } from '../queue/commands/command-args.js';
import { dateArg, groupArg } from '../queue/commands/stats-commands.js';
import type { Params } from './params.js';

/** The queue's default page of one failure group. */
export const GROUP_PAGE = 25;

export interface FailedQuery {
  group?: string;
  offset: number;
  limit: number;
}

/** `date=YYYYMMDD` (a real UTC day) or nothing for today; the page's date picker also sends `YYYY-MM-DD`. */
export function statsDateParam(query: Params, picker = false): string | undefined {
  const v = query.date;
  const date = picker && typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v) ? v.replaceAll('-', '') : v;
  return dateArg({ date });
}

/** `group`, `offset`, `limit` of `failed`: a page needs a group, as the queue says. */
export function failedParams(query: Params): FailedQuery {
  const group = groupArg({ group: query.group });
  const offset = offsetArg({ offset: query.offset });
  const limit = countArg({ limit: query.limit }, 'limit', MAX_PAGE, GROUP_PAGE)!;
  if (group === undefined && (query.offset !== undefined || query.limit !== undefined)) throw RqError.of('RQ_ERR_LACKING_FIELD', 'group');
  return { group, offset, limit };
}
