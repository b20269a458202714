// The names a create request may carry: the fields a create takes (the classic daemon's and rq's own), the ones classic clients send that it drops, and the refusal of a misspelt one.
import { counted, invalidField, RqError } from '../errors.js';
import { JOB_FIELDS } from './job-fields.js';
import { RUN_LIMIT_FIELDS } from './run-limits.js';
import { DERIVED_FIELDS } from './message.js';
import { closest, typoDistance } from './nearest-name.js';
import { TRACE_FIELDS } from './trace-context.js';

/** What the classic daemon copies from a create (spec §2.3). */
export const CLASSIC_CREATE_FIELDS = [
  'dest',
  'orig_msg_id',
  'count',
  'max_count',
  'src',
  'param1',
  'param2',
  'param3',
  'param4',
  'post_run_webhook',
  'due',
  'force_remote',
] as const;

/** What rq's creates take beyond them (rq-beyond §B1, §B8, §B9, §B12, the run limits, W3C trace context; `retries` is max_retries' other name). */
export const RQ_CREATE_FIELDS = [
  'idempotency_key',
  'tags',
  'depends',
  'depends_fail',
  'limit',
  'limit_concurrency',
  ...TRACE_FIELDS,
  ...JOB_FIELDS,
  ...RUN_LIMIT_FIELDS,
  'retries',
] as const;

/** Every field a create takes: what "did you mean" offers. */
export const CREATE_FIELDS: readonly string[] = [...CLASSIC_CREATE_FIELDS, ...RQ_CREATE_FIELDS];

/** What a copy does not take from its original: its own queue, id, count and key; `retries` is only a name for max_retries. */
const NOT_CLONED = ['dest', 'count', 'idempotency_key', 'retries', 'expire_at'] as const;
type CreateField = (typeof CLASSIC_CREATE_FIELDS)[number] | (typeof RQ_CREATE_FIELDS)[number];

/**
 * What a copy of a message meant to run carries (clone, a bulk move): every field a create takes but
 * expire_at (rq-beyond §B1.13); the copy gets its own id, count and history. Derived, so a new create
 * field is copied too.
 */
export const CLONE_FIELDS = [...CLASSIC_CREATE_FIELDS, ...RQ_CREATE_FIELDS].filter(
  (f): f is Exclude<CreateField, (typeof NOT_CLONED)[number]> => !(NOT_CLONED as readonly string[]).includes(f),
);

/**
 * Keys classic clients send beside the fields, which a create drops without a word, as the classic
 * daemon did: the mode (`_method`), the relay's `relay_id`, brightroll's form `relay_ok`, and the
 * keys of a stored message (one read back with `GET /q/<q>/<id>.json` and sent again).
 */
export const DROPPED_FIELDS: readonly string[] = [
  '_method',
  'relay_id',
  'relay_ok',
  'msg_id',
  'cloned_from',
  'dups',
  'dup',
  'child_pid',
  'failures',
  'last_failure',
  ...DERIVED_FIELDS,
];

const KNOWN = new Set([...CREATE_FIELDS, ...DROPPED_FIELDS]);

/**
 * rq's queue-only settings (config.json), which a message cannot set: refused as such, since a
 * message asking for its own `max_log_bytes` or `kill_grace` would otherwise run without it and no
 * word said. No classic client sends them. A queue's config.json takes these keys from this list
 * (queue-config.ts): a new queue-only setting goes here only, so that messages are refused it.
 */
export const QUEUE_ONLY_SETTINGS: readonly string[] = [
  'kill_grace',
  'heartbeat_output',
  'max_interrupts',
  'max_line_bytes',
  'max_log_bytes',
  'limits_best_effort',
];
const QUEUE_ONLY = new Set(QUEUE_ONLY_SETTINGS);

/**
 * Unknown keys of one request looked at for misspellings (a batch shares one budget); any beyond are
 * dropped unexamined, as every unknown key is. A client's own keys are a few; looking at each of half a
 * million keys in one body held the web's event loop for half a minute.
 */
const MAX_TYPO_CHECKS = 1000;

export interface TypoBudget {
  left: number;
}

export const typoBudget = (): TypoBudget => ({ left: MAX_TYPO_CHECKS });

/** Keys of one message at most: its fields are a few dozen, and every key costs each process the message passes. */
export const MAX_FIELDS = 1000;

/**
 * The names of a create's fields, checked before anything else reads them: more than MAX_FIELDS keys
 * are refused, and so is the first key that is no field a create knows but is a misspelling of one,
 * as `prioirty: unknown field; did you mean "priority"?` (400), and a queue-only setting. Every other unknown key is left for
 * the create to drop, as the classic daemon drops it: classic clients are never refused.
 */
export function refuseFieldNames(fields: Record<string, unknown>, prefix = '', budget: TypoBudget = typoBudget()): void {
  const keys = Object.keys(fields);
  if (keys.length > MAX_FIELDS) throw invalidField(`${prefix}message`, `an object of at most ${MAX_FIELDS} fields`, counted(keys.length, 'fields'));
  for (const key of keys) {
    if (KNOWN.has(key)) continue;
    if (QUEUE_ONLY.has(key)) throw RqError.of('RQ_ERR_QUEUE_SETTING_FIELD', `${prefix}${key}`);
    if (budget.left-- <= 0) return;
    const near = closest(key, CREATE_FIELDS, typoDistance);
    if (near !== undefined) throw RqError.of('RQ_ERR_UNKNOWN_FIELD', `${prefix}${key}`, near);
  }
}
