// The message model: stored fields, what a create copies from a request, and their validation.
import { counted, invalidField, RqError } from '../errors.js';
import { type JobFields, epochSeconds, numberOf, readJobFields } from './job-fields.js';
import { type RunLimits, readRunLimits } from './run-limits.js';
import { type DependsFail, readDepends, readDependsFail } from './depends.js';
import { readLimit, readLimitConcurrency } from './limit-key.js';
import { readTags } from './tags.js';
import { type TraceContext, readTraceContext } from './trace-context.js';
import type { State } from './states.js';

/** The fields a request may set; everything else in it is dropped (spec §2.3). */
export interface CreateFields extends JobFields, RunLimits, TraceContext {
  dest: string;
  orig_msg_id?: string;
  count?: number;
  max_count?: number;
  due?: number;
  src?: string;
  param1?: string;
  param2?: string;
  param3?: string;
  param4?: string;
  post_run_webhook?: string[];
  force_remote?: unknown;
  /** A create with the key of one made within the window answers that message (queue/coordination/idempotency.ts). */
  idempotency_key?: string;
  /** rq-beyond §B9: 0–32 tags, lookup by tag across queues. */
  tags?: string[];
  /** rq-beyond §B8: refs (`<queue>/<id>`) of messages of this host that must finish first. */
  depends?: string[];
  /** rq-beyond §B8: what a failed dependency does: fail (default), run, wait. */
  depends_fail?: DependsFail;
  /** rq-beyond §B12: the key (or key template) of the named slots this message takes to run. */
  limit?: string;
  /** rq-beyond §B12: the key's concurrency, when config/limits.json does not give one. */
  limit_concurrency?: number;
}

export interface Message extends CreateFields {
  msg_id: string;
  orig_msg_id: string;
  count: number;
  max_count: number;
  due: number;
  cloned_from?: string;
  dups?: string[];
  dup?: string;
  // Stored messages may carry keys written by other tools or later rq versions; they are kept.
  [key: string]: unknown;
}

export const DERIVED_FIELDS = ['path', 'state', 'status', '_attachments', 'waiting', 'depends_done', 'dependents'] as const;
export const DEFAULT_MAX_COUNT = 15;
const TEXT_FIELDS = ['src', 'param1', 'param2', 'param3', 'param4', 'orig_msg_id'] as const;
export const MAX_TEXT = 1 << 20;

/**
 * Fields a script receives as environment variables (RQ_PARAM1…, RQ_DEST, RQ_ORIG_MSG_ID): Linux's
 * exec refuses one longer than 128 KiB (MAX_ARG_STRLEN) with E2BIG, so they are refused at create,
 * when the sender can still hear it, not when the script cannot start. The name and `=` take 16.
 */
export const MAX_ENV_FIELD_BYTES = 131072 - 16;
const ENV_FIELDS = new Set(['dest', 'param1', 'param2', 'param3', 'param4', 'orig_msg_id']);

const NUL = /\u0000/;

function text(field: string, v: unknown): string {
  // Classic clients send params as strings; numbers and booleans from JSON clients are kept as text.
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (typeof v !== 'string') throw invalidField(field, 'a string', v);
  if (NUL.test(v)) throw invalidField(field, 'text without NUL bytes', v);
  if (v.length > MAX_TEXT) throw invalidField(field, `at most ${MAX_TEXT} characters`, counted(v.length, 'characters'));
  if (ENV_FIELDS.has(field)) {
    const bytes = Buffer.byteLength(v);
    if (bytes > MAX_ENV_FIELD_BYTES)
      throw invalidField(
        field,
        `at most ${MAX_ENV_FIELD_BYTES} bytes (a script gets it as one environment variable, and exec takes at most 128 KiB)`,
        counted(bytes, 'bytes'),
      );
  }
  return v;
}

function whole(field: string, v: unknown): number {
  // Decimal only, as every other whole-number field: Number() would take "0x10" as 16.
  const n = typeof v === 'string' ? numberOf(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw invalidField(field, 'a whole number >= 0', v);
  return n;
}

function webhooks(v: unknown): string[] {
  const list = typeof v === 'string' ? v.split(' ').filter(Boolean) : v;
  if (!Array.isArray(list)) throw invalidField('post_run_webhook', 'an array of http(s) URLs', v);
  return list.map((u, i) => {
    if (typeof u !== 'string' || !/^https?:\/\/[^\s]+$/.test(u)) throw invalidField(`post_run_webhook[${i}]`, 'an http(s) URL', u);
    return u;
  });
}

/**
 * Picks and validates the fields a create copies from a request (spec §2.3). `dest` is required
 * with the classic text; `due` is stored as a number (the classic kept the string from the CLI).
 */
export function normaliseCreate(input: unknown): CreateFields {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidField('message', 'a JSON object of message fields', input);
  }
  const req = input as Record<string, unknown>;
  if (req.dest === undefined || req.dest === null || req.dest === '') {
    throw RqError.of('RQ_ERR_MISSING_DEST');
  }
  const out: CreateFields = { dest: text('dest', req.dest) };
  for (const f of TEXT_FIELDS) if (req[f] !== undefined && req[f] !== null) out[f] = text(f, req[f]);
  if (req.count !== undefined && req.count !== null) out.count = whole('count', req.count);
  if (req.max_count !== undefined && req.max_count !== null) out.max_count = whole('max_count', req.max_count);
  if (req.due !== undefined && req.due !== null && req.due !== '') out.due = epochSeconds('due', req.due, invalidField);
  if (req.post_run_webhook !== undefined && req.post_run_webhook !== null && req.post_run_webhook !== '') {
    out.post_run_webhook = webhooks(req.post_run_webhook);
  }
  if (req.force_remote !== undefined) out.force_remote = req.force_remote;
  if (req.idempotency_key !== undefined && req.idempotency_key !== null && req.idempotency_key !== '')
    out.idempotency_key = idempotencyKey(req.idempotency_key);
  if (req.tags !== undefined && req.tags !== null && req.tags !== '') {
    const tags = readTags(req.tags, invalidField);
    if (tags.length) out.tags = tags;
  }
  if (req.depends !== undefined && req.depends !== null) out.depends = readDepends(req.depends);
  if (req.depends_fail !== undefined && req.depends_fail !== null && req.depends_fail !== '') out.depends_fail = readDependsFail(req.depends_fail);
  if (req.limit !== undefined && req.limit !== null) out.limit = readLimit(req.limit, invalidField);
  if (req.limit_concurrency !== undefined && req.limit_concurrency !== null && req.limit_concurrency !== '')
    out.limit_concurrency = readLimitConcurrency(req.limit_concurrency, invalidField);
  Object.assign(out, readTraceContext(req, invalidField), readJobFields(req, invalidField, '', Date.now()), readRunLimits(req, invalidField));
  if (out.expire_at !== undefined && out.due !== undefined && out.expire_at <= out.due)
    throw invalidField('expire_at', `a time after due (${out.due}): the message would expire before it could run`, req.expire_at);
  return out;
}

export const MAX_IDEMPOTENCY_KEY = 255;

function idempotencyKey(v: unknown): string {
  const expected = `a key of 1 to ${MAX_IDEMPOTENCY_KEY} printable characters (a UUID, say)`;
  if (typeof v !== 'string' || v.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e\u00a0-\uffff][\x20-\x7e\u00a0-\uffff]*$/u.test(v))
    throw invalidField('idempotency_key', expected, v);
  return v;
}

/** A message as stored on disk: derived fields are never written (they are recomputed on read). */
export function storable(msg: Message): Message {
  const copy = { ...msg };
  for (const f of DERIVED_FIELDS) delete copy[f];
  return copy;
}

/** force_remote semantics: present and not JSON false/null (spec §2.3). */
export function isSetFlag(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false;
}

export interface StatusView {
  path: string;
  status: string;
  state: State;
}

/** `<state>` or `<state> - <job_status>` (a null job status gives a trailing "<state> - "). */
export function statusText(state: State, job: { job_status: string | null } | null): string {
  return job ? `${state} - ${job.job_status ?? ''}` : state;
}

/** Why a message ended in err, as `msg.outcome` says (rq-beyond §B1.3); none on a classic failure, read as `failed`. */
export const OUTCOMES = ['failed', 'exhausted', 'fatal', 'expired', 'cancelled', 'dependency_failed', 'interrupted'] as const;

/** Why a que message is not running (rq-beyond §B2): get_message's derived `waiting`, and the `waiting` command's entries. */
/** `position` of a limit wait: 1-based place in line, 0 once granted, null while rq-mgr has not answered. */
export type MessageWaiting =
  | { reason: 'ready' }
  | { reason: 'delayed'; due: number }
  | { reason: 'coalesced'; into: string }
  | { reason: 'limit'; key: string; position: number | null }
  | { reason: 'dependencies'; waiting_on: string[] };

/** A cancel as `msg.cancel` and `run/<id>/cancel` store it; `purge` removes the message once it is in err (rq-beyond §B5). */
export interface CancelRecord {
  at: string;
  by: string;
  reason: string;
  purge?: true;
}

/** The status of a cancelled message (rq-beyond §B1.3); the reason defaults to who asked. */
export function cancelledStatus(reason: string): string {
  return `CANCELLED - ${reason}`;
}

/** Copies the listed fields that are set on `from` (dup, clone). */
export function pickFields(from: Message, names: readonly (keyof CreateFields)[]): CreateFields {
  const out: Record<string, unknown> = { dest: from.dest };
  for (const f of names) if (from[f] !== undefined) out[f] = from[f];
  return out as unknown as CreateFields;
}

/** A message as get_message shows it: the stored fields plus the derived path, state, status and attachments (spec §2.3). */
export interface MessageView {
  msg_id: string;
  path: string;
  state: string;
  status: string;
  /** md5 null: no sum kept and too large to compute; `type`: not a regular file (a link, FIFO, directory, ... a script left). */
  _attachments?: Record<string, { md5: string | null; size: number | null; path: string; type?: string }>;
  [key: string]: unknown;
}

/**
 * A batch makes every message ready to run (create_message's mode): a message asking for another
 * (`_method` prep, single_que, or a misspelling) is refused rather than made in a mode it did not ask for.
 */
export function checkBatchMode(input: unknown): void {
  const method = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)._method : undefined;
  if (method !== undefined && method !== 'commit')
    throw invalidField('_method', 'commit or nothing: a batch makes every message ready to run (send one for prep or single_que on its own)', method);
}
