// Reads and checks the rq tool's options: the message fields to send, the message id, the root.
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import { JOB_FIELDS } from '../message/job-fields.js';
import { normaliseCreate } from '../message/message.js';
import { parseFullId } from '../message/message-id.js';
import { isMsgId, queueNameProblem } from '../message/names.js';
import { TAG_EXPECTED, isTag, readTags } from '../message/tags.js';
import type { OptionValue } from '../args.js';

export type Options = Record<string, OptionValue>;

/**
 * The create fields the classic tool copies from its options (spec §10.1), then the run-policy
 * fields (rq-beyond §B1.10, `--retries` for `--max_retries`), `--tags a,b`, the dependencies
 * (§B8: `--depends q/<id>,… --depends_fail run`) and the limit (§B12: `--limit KEY
 * --limit_concurrency N`; here `--limit` is the message field, not a page size as in listings);
 * `post_run_webhook` cannot be set.
 */
const MESSAGE_KEYS = [
  ...['dest', 'src', 'count', 'max_count', 'param1', 'param2', 'param3', 'param4', 'due', 'force_remote'],
  ...[...JOB_FIELDS, 'retries', 'tags', 'depends', 'depends_fail', 'limit', 'limit_concurrency'],
];
/** Keys a bare `--key` cannot stand for (it would be sent as the text "true"), with an example value. */
const VALUE_KEYS = new Map<string, string>([
  ...['count', 'max_count', 'due', ...JOB_FIELDS, 'retries', 'limit_concurrency'].map((k): [string, string] => [k, 'N']),
  ['tags', 'a,b'],
  ['depends', '<queue>/<id>'],
  ['depends_fail', 'run'],
  ['limit', 'KEY'],
]);

export function usage(message: string): RqError {
  return RqError.of('RQ_ERR_USAGE', message);
}

const received = (v: OptionValue | undefined): string => (typeof v === 'boolean' ? 'no value' : shown(v));

/** A string option; undefined when absent, an error when given without a value. */
export function stringOpt(opts: Options, key: string, expected: string): string | undefined {
  const v = opts[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw usage(`--${key}: expected ${expected}, received ${received(v)}`);
  return v;
}

/** A flag: no value allowed. */
export function flagOpt(opts: Options, key: string): boolean {
  const v = opts[key];
  if (v === undefined || v === false) return false;
  if (v === true) return true;
  throw usage(`--${key}: expected no value (a flag), received ${shown(v)}`);
}

export function requiredOpt(opts: Options, key: string, expected: string): string {
  const v = stringOpt(opts, key, expected);
  if (v === undefined) throw usage(`--${key}: expected ${expected}, received nothing`);
  return v;
}

export function rootOpt(opts: Options): string | undefined {
  return stringOpt(opts, 'root', 'a directory path');
}

export function checkQueueName(name: string, flag: string): string {
  const problem = queueNameProblem(name);
  if (problem) throw usage(`--${flag}: ${problem}`);
  return name;
}

export interface MessageTarget {
  /** The id as given on the command line: classic output lines echo it. */
  given: string;
  queue: string;
  id: string;
}

const MSG_ID_EXPECTED = 'a full message id such as http://127.0.0.1:3333/q/<queue>/20261121.1643.46.613.2164022 (or <queue>/<id>)';

/** `--msg_id`: a FULLID (the host part is ignored, as classic), a `/q/<q>/<id>` path or `<q>/<id>`. */
export function msgIdOpt(opts: Options): MessageTarget {
  const given = requiredOpt(opts, 'msg_id', MSG_ID_EXPECTED);
  const bare = /^([^/]+)\/([^/]+)$/.exec(given);
  const parts = parseFullId(given) ?? (bare ? { queue: bare[1], id: bare[2] } : null);
  if (!parts || queueNameProblem(parts.queue) !== null || !isMsgId(parts.id)) {
    throw usage(`--msg_id: expected ${MSG_ID_EXPECTED}, received ${shown(given)}`);
  }
  return { given, ...parts };
}

/**
 * The fields to send, as the classic tool sends them (strings, or true for a bare flag), after
 * the checks the queue would make, so a typo is reported against its flag before anything is sent.
 */
export function messageFields(opts: Options): Record<string, OptionValue> {
  requiredOpt(opts, 'dest', 'a queue name or http://host:port/q/<queue> URL');
  const fields: Record<string, OptionValue> = {};
  for (const key of MESSAGE_KEYS) {
    const v = opts[key];
    if (v === undefined) continue;
    const example = VALUE_KEYS.get(key);
    if (example !== undefined && typeof v === 'boolean') throw usage(`--${key}: expected a value (--${key} ${example} or --${key}=${example}), received no value`);
    // A bare text flag is the text "true": CLI values are strings (spec §2.3).
    fields[key] = key === 'force_remote' || typeof v === 'string' ? v : String(v);
  }
  // Sent again with the same key (a retry after a lost reply), the create answers the first message.
  const key = stringOpt(opts, 'idempotency-key', 'a key of 1 to 255 printable characters');
  if (key !== undefined) fields.idempotency_key = key;
  try {
    normaliseCreate(fields);
  } catch (err) {
    // normaliseCreate names the field (`count: expected …`); on the command line it is a flag.
    if (err instanceof RqError) throw usage(`--${err.message.replace(/^idempotency_key:/, 'idempotency-key:')}`);
    throw err;
  }
  return fields;
}

/** `--pathname`, made absolute against the working directory as the classic tool does. */
export function pathnameOpt(opts: Options, cwd: string): string {
  return path.resolve(cwd, requiredOpt(opts, 'pathname', 'the path of a file to attach'));
}

/** rq-beyond §B9.1, as `message/tags.ts` checks a tag. */

/** `--tag T`: one tag, checked before anything is sent. */
export function tagOpt(opts: Options): string {
  const tag = requiredOpt(opts, 'tag', TAG_EXPECTED);
  if (!isTag(tag)) throw usage(`--tag: expected ${TAG_EXPECTED}, received ${shown(tag)}`);
  return tag;
}

/** `--add a,b` / `--remove c`: the tags of a comma-separated list (undefined when absent), each checked as a create checks `tags`. */
export function tagListOpt(opts: Options, key: 'add' | 'remove'): string[] | undefined {
  const v = stringOpt(opts, key, 'a comma-separated list of tags');
  return v === undefined ? undefined : readTags(v, (field, expected, got) => usage(`--${field}: expected ${expected}, received ${shown(got)}`), key);
}
