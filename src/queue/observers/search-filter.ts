// The one matcher of the search index: which entries a query picks (fields, free text, state, acknowledged, created range) and in what order (created, due or finished).
import { idTime } from '../../message/message-id.js';
import type { State } from '../../message/states.js';

export const SORT_KEYS = ['created', 'due', 'finished'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export const ORDERS = ['asc', 'desc'] as const;
export type Order = (typeof ORDERS)[number];

export interface SearchQuery {
  /** Field → text; every one must match (contains, or equals with `exact`). */
  fields: Record<string, string>;
  /** A text any one field must contain (the UI's search box); cut values count by their first 256 characters. */
  text?: string;
  exact: boolean;
  state?: State;
  /** true: acknowledged errors only; false: none of them; absent: both. */
  acked?: boolean;
  /** Created (the id's time) at or after / before, epoch milliseconds. */
  createdFrom?: number;
  createdTo?: number;
  /** Newest created first when absent, as brightroll's search answered. */
  sort?: SortKey;
  order?: Order;
  offset: number;
  limit: number;
}

export interface Entry {
  state: State;
  acked?: true;
  fields: Record<string, string>;
  /** Fields whose value was cut at MAX_VALUE. */
  cut?: Set<string>;
  /** Fields that were numbers, answered as numbers. */
  nums?: Set<string>;
  /** Known by a move only (its create was not seen): its fields are being read. */
  stub?: true;
  /** When it entered done, relayed or err (epoch ms): from the move's event, or read from its `status` file when first sorted on. */
  finished?: number;
}

/** Ids and times every message has: a free text that matched them would match everything. */
const NOT_TEXT = new Set(['msg_id', 'orig_msg_id', 'cloned_from', 'dup', 'due', 'count', 'max_count', 'expire_at', 'priority']);

export type Verdict = 'yes' | 'no' | 'maybe';

/** Does field `k` of an entry match? 'maybe' when only the message itself can tell (its value was cut). */
function judge(e: Entry, k: string, wanted: string, exact: boolean): Verdict {
  // Own fields only: a query on `constructor` or `toString` is a field no message has, not Object.prototype's.
  const value = Object.hasOwn(e.fields, k) ? e.fields[k] : undefined;
  if (value === undefined) return 'no';
  if (!e.cut?.has(k)) return (exact ? value === wanted : value.includes(wanted)) ? 'yes' : 'no';
  if (exact) return wanted.length > value.length && wanted.startsWith(value) ? 'maybe' : 'no';
  return value.includes(wanted) ? 'yes' : 'maybe';
}

/** The verdict of the whole query on one entry. */
export function matches(id: string, e: Entry, q: SearchQuery, wanted: [string, string][]): Verdict {
  if (q.state !== undefined && e.state !== q.state) return 'no';
  if (q.acked !== undefined && (e.acked === true) !== q.acked) return 'no';
  if (q.createdFrom !== undefined || q.createdTo !== undefined) {
    const t = idTime(id) ?? 0;
    if ((q.createdFrom !== undefined && t < q.createdFrom) || (q.createdTo !== undefined && t >= q.createdTo)) return 'no';
  }
  if (q.text !== undefined && !Object.entries(e.fields).some(([k, v]) => !NOT_TEXT.has(k) && v.includes(q.text!))) return 'no';
  let verdict: Verdict = 'yes';
  for (const [k, v] of wanted) {
    const one = judge(e, k, v, q.exact);
    if (one === 'no') return 'no';
    if (one === 'maybe') verdict = 'maybe';
  }
  return verdict;
}

/**
 * Sorts hit ids in place. Created is the id's order (its stamp comes first); due and finished
 * compare numbers, ties by id; a message that has not finished sorts after every finished one,
 * whichever the order, so the page of "most recently finished" starts with finished messages.
 */
export function sortHits(ids: string[], entries: Map<string, Entry>, sort: SortKey = 'created', order: Order = 'desc'): string[] {
  const dir = order === 'asc' ? 1 : -1;
  const byId = (a: string, b: string) => (a < b ? -dir : a > b ? dir : 0);
  if (sort === 'created') return ids.sort(byId);
  // Keys read once into a flat array (not looked up per comparison): a sort of 100,000 stays in tens of ms.
  const keyed = ids.map((id) => {
    const e = entries.get(id)!;
    const v = sort === 'due' ? Number(e.fields.due) : e.finished;
    return { id, k: v === undefined || Number.isNaN(v) ? NaN : v };
  });
  keyed.sort((a, b) => {
    const na = Number.isNaN(a.k);
    const nb = Number.isNaN(b.k);
    if (na || nb) return na === nb ? byId(a.id, b.id) : na ? 1 : -1;
    return a.k === b.k ? byId(a.id, b.id) : (a.k - b.k) * dir;
  });
  for (let i = 0; i < keyed.length; i++) ids[i] = keyed[i].id;
  return ids;
}
