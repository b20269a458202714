// The queue socket's `search` command: messages of every state whose fields contain (or equal) the given texts, filtered by state, acknowledgement and creation time, sorted and paged; with `detail`, each row's status, run time and finish time.
import { counted, invalidField } from '../../errors.js';
import { STATES } from '../../message/states.js';
import { mapLimit } from '../../spool/map-limit.js';
import { type Args, MAX_PAGE, countArg, flag, offsetArg, oneOf } from './command-args.js';
import type { Queue } from '../queue.js';
import { ORDERS, SORT_KEYS, type SearchQuery } from '../observers/search-filter.js';
import type { SearchHit } from '../observers/search-index.js';

const FIELD = /^[A-Za-z0-9_]{1,64}$/;
const MAX_FIELDS = 8;
const MAX_TEXT = 1000;
/** Epoch milliseconds from 1970 to 9999. */
const MAX_MS = 253_402_300_800_000;
const DETAIL_LANES = 16;
/** The longest a listing waits for the queue's first read of its messages before answering `building`. */
const MAX_WAIT_MS = 60_000;

/** `query`: an object of field name → text (strings or numbers), at most MAX_FIELDS of them. */
function queryArg(args: Args): Record<string, string> {
  const v = args.query;
  if (v === undefined || v === null || v === '') return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidField('query', 'an object of field name to text, such as {"param1": "ear"}', v);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_FIELDS) throw invalidField('query', `at most ${MAX_FIELDS} fields`, counted(entries.length, 'fields'));
  const out: Record<string, string> = {};
  for (const [k, text] of entries) {
    if (!FIELD.test(k)) throw invalidField('query', 'field names of letters, digits and _ (1-64 characters)', k);
    if ((typeof text !== 'string' && typeof text !== 'number') || String(text).length > MAX_TEXT)
      throw invalidField(`query[${k}]`, `a text of at most ${MAX_TEXT} characters`, text);
    out[k] = String(text);
  }
  return out;
}

function msArg(args: Args, field: string): number | undefined {
  const v = args[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_MS) throw invalidField(field, 'epoch milliseconds (a whole number)', v);
  return v;
}

/** The query every listing command shares (`search`, and `bulk`'s filter): one matcher for all of them. */
export function searchQuery(args: Args, defaultLimit = 100): SearchQuery {
  // An absent text stays undefined as it is: only null and '' need saying.
  const text = args.text === null || args.text === '' ? undefined : args.text;
  if (text !== undefined && (typeof text !== 'string' || text.length > MAX_TEXT)) throw invalidField('text', `a text of at most ${MAX_TEXT} characters`, text);
  const acked = args.acked === undefined || args.acked === null || args.acked === '' ? undefined : flag(args, 'acked');
  const q: SearchQuery = {
    fields: queryArg(args),
    text,
    exact: flag(args, 'exact'),
    state: oneOf(args, 'state', STATES),
    offset: offsetArg(args),
    limit: countArg(args, 'limit', MAX_PAGE, defaultLimit)!,
  };
  if (acked !== undefined) q.acked = acked;
  const from = msArg(args, 'created_from');
  const to = msArg(args, 'created_to');
  if (from !== undefined) q.createdFrom = from;
  if (to !== undefined) q.createdTo = to;
  if (from !== undefined && to !== undefined && to <= from) throw invalidField('created_to', `a time after created_from (${from})`, to);
  const sort = oneOf(args, 'sort', SORT_KEYS);
  const order = oneOf(args, 'order', ORDERS);
  if (sort) q.sort = sort;
  if (order) q.order = order;
  return q;
}

export interface HitDetail {
  /** `<state> - <status text>` as get_message_status gives it. */
  status: string;
  /** The last run's wall time (a running one's so far), null when it never ran. */
  ms: number | null;
  /** Every run it had (its history's que → run lines, a running one included). */
  runs: number;
  /** The wall time of all its runs together (a running one's so far), null when it never ran. */
  total_ms: number | null;
  /** When it finished (epoch ms), null while it has not. */
  finished: number | null;
}

/** What a page's rows show beyond the index: read from each message of the page only. */
async function detail(q: Queue, hit: SearchHit): Promise<HitDetail> {
  const name = hit.acked ? `.${hit.msg_id}` : hit.msg_id;
  const run = hit.state === 'run' ? q.index.run(hit.msg_id) : undefined;
  const where = { state: hit.state, dir: run?.dir ?? q.spool.msgDir(hit.state, name) };
  const [status, history] = await Promise.all([
    q.ops.statusView(hit.msg_id, where).then(
      (s) => s.status,
      () => hit.state,
    ),
    q.spool.readHistory(hit.state, name).catch(() => []),
  ]);
  let ms: number | null = run ? q.now() - run.startedAt : null;
  let total_ms = ms;
  let finished: number | null = null;
  let runs = 0;
  for (const h of history) {
    const wall = (h as { exit?: { wall_ms?: unknown } }).exit?.wall_ms;
    if (typeof wall === 'number') {
      total_ms = (total_ms ?? 0) + wall;
      if (!run) ms = wall;
    }
    if (h.to === 'run' && h.from !== 'run') runs += 1;
    if (h.to === 'done' || h.to === 'err' || h.to === 'relayed') finished = Date.parse(h.at);
    else if (h.to) finished = null;
  }
  return { status, ms, runs: Math.max(runs, run ? 1 : 0), total_ms, finished };
}

export const SEARCH_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  search: async (q, args) => {
    const query = searchQuery(args);
    const index = q.stats.search;
    // A page would rather say "still reading" than wait long for the first read of every message.
    const waitMs = countArg(args, 'wait_ms', MAX_WAIT_MS);
    if (waitMs !== undefined && !index.ready) {
      index.begin();
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
      const ready = await Promise.race([index.whenBuilt().then(() => true), bound]);
      clearTimeout(timer);
      if (!ready) return ['ok', { total: 0, messages: [], building: { read: index.reading } }];
    }
    const page = await index.search(query);
    // An absent detail reads as false.
    if (!flag(args, 'detail')) return ['ok', page];
    const details = await mapLimit(page.messages, DETAIL_LANES, (hit) => detail(q, hit));
    return ['ok', { ...page, messages: page.messages.map((m, i) => ({ ...m, ...details[i] })) }];
  },
};
