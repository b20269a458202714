// The message list's query parameters (queue page, messages.json, bulk's "all matching"): each one checked, refused by name, turned into the queue's search arguments and back into links.
import { counted, invalidField } from '../errors.js';
import type { SearchArgs } from '../ipc/queue-client.js';
import { STATES, type State } from '../message/states.js';

/** The state filter: a state, or `acked` (acknowledged errors, `err/.<id>`). `err` means the unacknowledged ones. */
export const LIST_STATES = [...STATES, 'acked'] as const;
export type ListState = State | 'acked';
export const PAGE_SIZES = [25, 50, 100, 500] as const;
export const LIST_SORTS = ['created', 'due', 'finished'] as const;
const MAX_TEXT = 1000;
const MAX_OFFSET = 10_000_000;

export interface ListFilter {
  state?: ListState;
  /** Free text any field contains: the classic queue page's `filter`. */
  text?: string;
  /** Created at or after / before, epoch ms (UTC), as given in `from` and `to`. */
  from?: number;
  to?: number;
  sort: (typeof LIST_SORTS)[number];
  order: 'asc' | 'desc';
  offset: number;
  limit: (typeof PAGE_SIZES)[number];
}

export const DEFAULT_LIMIT = 50;

/** One query value: absent, or exactly one string (a repeated parameter is refused, not guessed at). */
function one(query: Record<string, unknown>, key: string, expected: string): string | undefined {
  const v = query[key];
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') throw invalidField(key, `${expected} (given once)`, v);
  return v;
}

function pick<T extends string | number>(query: Record<string, unknown>, key: string, values: readonly T[], more = ''): T | undefined {
  const expected = `one of ${values.join(', ')}${more}`;
  const v = one(query, key, expected);
  if (v === undefined) return undefined;
  const found = values.find((x) => String(x) === v);
  if (found === undefined) throw invalidField(key, expected, v);
  return found;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?Z?$/;

/**
 * `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS]` in UTC (ids are UTC). A bare date as `to` means the
 * end of that day, so `from=2026-11-21&to=2026-11-21` is that whole day.
 */
function dateParam(query: Record<string, unknown>, key: 'from' | 'to'): number | undefined {
  const expected = 'a UTC date YYYY-MM-DD or date and time YYYY-MM-DDTHH:MM[:SS]';
  const v = one(query, key, expected);
  if (v === undefined) return undefined;
  const m = DATE.exec(v);
  const [y, mo, d, h, mi, s] = (m ?? []).slice(1).map((x) => (x === undefined ? undefined : Number(x)));
  const ms = m ? Date.UTC(y!, mo! - 1, d!, h ?? 0, mi ?? 0, s ?? 0) : NaN;
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-31 over into March: such a date is refused instead.
  if (!m || Number.isNaN(ms) || back.getUTCDate() !== d || back.getUTCMonth() !== mo! - 1 || (h ?? 0) > 23 || (mi ?? 0) > 59 || (s ?? 0) > 59)
    throw invalidField(key, expected, v);
  return key === 'to' && h === undefined ? ms + 86_400_000 : ms;
}

/** Reads and checks every list parameter of a request's query; the first bad one is refused (400) by name. */
export function listFilter(query: Record<string, unknown>): ListFilter {
  const f: ListFilter = { sort: 'created', order: 'desc', offset: 0, limit: DEFAULT_LIMIT };
  const state = one(query, 'state', `one of ${LIST_STATES.join(', ')}, or all`);
  if (state !== undefined && state !== 'all') f.state = pick(query, 'state', LIST_STATES, ', or all');
  const text = one(query, 'filter', `a text of at most ${MAX_TEXT} characters`);
  if (text !== undefined && text.length > MAX_TEXT)
    throw invalidField('filter', `a text of at most ${MAX_TEXT} characters`, counted(text.length, 'characters'));
  if (text !== undefined) f.text = text;
  const from = dateParam(query, 'from');
  const to = dateParam(query, 'to');
  if (from !== undefined) f.from = from;
  if (to !== undefined) f.to = to;
  if (from !== undefined && to !== undefined && to <= from) throw invalidField('to', `a time after from (${String(query.from)})`, query.to);
  f.sort = pick(query, 'sort', LIST_SORTS) ?? f.sort;
  f.order = pick(query, 'order', ['asc', 'desc'] as const) ?? f.order;
  f.limit = pick(query, 'limit', PAGE_SIZES) ?? f.limit;
  const offset = one(query, 'offset', `a whole number from 0 to ${MAX_OFFSET}`);
  if (offset !== undefined) {
    if (!/^\d{1,8}$/.test(offset) || Number(offset) > MAX_OFFSET) throw invalidField('offset', `a whole number from 0 to ${MAX_OFFSET}`, offset);
    f.offset = Number(offset);
  }
  return f;
}

/** The queue's `search` arguments for a filter (its page, or with `all` every match). */
export function searchArgs(f: ListFilter): SearchArgs {
  const args: SearchArgs = { sort: f.sort, order: f.order, offset: f.offset, limit: f.limit };
  if (f.state === 'acked') Object.assign(args, { state: 'err', acked: true });
  else if (f.state === 'err') Object.assign(args, { state: 'err', acked: false });
  else if (f.state) args.state = f.state;
  if (f.text !== undefined) args.text = f.text;
  if (f.from !== undefined) args.created_from = f.from;
  if (f.to !== undefined) args.created_to = f.to;
  return args;
}

/** The filter as query parameters (defaults left out), for links that keep it: pager, state tabs, the bulk form. */
export function filterParams(f: ListFilter, change: Partial<ListFilter> = {}): Record<string, string> {
  const g = { ...f, ...change };
  const out: Record<string, string> = {};
  if (g.state) out.state = g.state;
  if (g.text !== undefined) out.filter = g.text;
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19);
  if (g.from !== undefined) out.from = iso(g.from);
  if (g.to !== undefined) out.to = iso(g.to);
  if (g.sort !== 'created') out.sort = g.sort;
  if (g.order !== 'desc') out.order = g.order;
  if (g.offset) out.offset = String(g.offset);
  if (g.limit !== DEFAULT_LIMIT) out.limit = String(g.limit);
  return out;
}

export function queryString(params: Record<string, string>): string {
  const s = new URLSearchParams(params).toString();
  return s ? `?${s}` : '';
}
