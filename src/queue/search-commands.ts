// The queue socket's `search` command: messages of every state whose fields contain (or equal) the given texts, newest first, paged.
import { invalidField } from '../errors.js';
import { STATES } from '../message/states.js';
import { type Args, MAX_PAGE, countArg, flag, offsetArg, oneOf } from './command-args.js';
import type { Queue } from './queue.js';

const FIELD = /^[A-Za-z0-9_]{1,64}$/;
const MAX_FIELDS = 8;
const MAX_TEXT = 1000;

/** `query`: an object of field name → text (strings or numbers), at most MAX_FIELDS of them. */
function queryArg(args: Args): Record<string, string> {
  const v = args.query;
  if (v === undefined || v === null || v === '') return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidField('query', 'an object of field name to text, such as {"param1": "ear"}', v);
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > MAX_FIELDS) throw invalidField('query', `at most ${MAX_FIELDS} fields`, `${entries.length} fields`);
  const out: Record<string, string> = {};
  for (const [k, text] of entries) {
    if (!FIELD.test(k)) throw invalidField('query', 'field names of letters, digits and _ (1-64 characters)', k);
    if ((typeof text !== 'string' && typeof text !== 'number') || String(text).length > MAX_TEXT) throw invalidField(`query[${k}]`, `a text of at most ${MAX_TEXT} characters`, text);
    out[k] = String(text);
  }
  return out;
}

export const SEARCH_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  search: async (q, args) => {
    const text = args.text === undefined || args.text === null || args.text === '' ? undefined : args.text;
    if (text !== undefined && (typeof text !== 'string' || text.length > MAX_TEXT)) throw invalidField('text', `a text of at most ${MAX_TEXT} characters`, text);
    const query = { fields: queryArg(args), text, exact: flag(args, 'exact'), state: oneOf(args, 'state', STATES), offset: offsetArg(args), limit: countArg(args, 'limit', MAX_PAGE, 100)! };
    return ['ok', await q.stats.search.search(query)];
  },
};
