// Reads and checks the rq tool's options: the message fields to send, the root, tags (the message id: message-target.ts).
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import { normaliseCreate } from '../message/message.js';
import { queueNameProblem } from '../message/names.js';
import { TAG_EXPECTED, isTag, readTags } from '../message/tags.js';
import { type TraceContext, traceFrom } from '../message/trace-context.js';
import type { OptionValue } from '../args.js';
import { resolveRoot } from '../config/root.js';
import fs from 'node:fs';
import { MESSAGE_KEYS } from './message-options.js';

export type Options = Record<string, OptionValue>;

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

/** A whole number option in [lo, hi]; `fallback` when absent. */
export function wholeOpt(opts: Options, key: string, lo: number, hi: number, fallback: number): number {
  const expected = `a whole number from ${lo} to ${hi}`;
  const v = stringOpt(opts, key, expected);
  if (v === undefined) return fallback;
  if (!/^\d{1,9}$/.test(v) || Number(v) < lo || Number(v) > hi) throw usage(`--${key}: expected ${expected}, received ${shown(v)}`);
  return Number(v);
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

/**
 * The root to work on (--root, else $RQ_ROOT, else the installation), refused when it is not a
 * directory with a queues/ folder, naming where it came from: `--root /x: no such directory`.
 */
export function rootDir(opts: Options, env: NodeJS.ProcessEnv): string {
  const flag = rootOpt(opts);
  const root = resolveRoot(flag, env);
  const from = flag !== undefined ? `--root ${flag}` : env.RQ_ROOT ? `RQ_ROOT ${env.RQ_ROOT}` : `the default root ${root}`;
  const isDir = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  if (!isDir(root)) throw usage(`${from}: no such directory`);
  if (!isDir(`${root}/queues`)) throw usage(`${from}: not an rq root (no queues/ folder; rq-install --root DIR makes one)`);
  return root;
}

export function checkQueueName(name: string, flag: string): string {
  const problem = queueNameProblem(name);
  if (problem) throw usage(`--${flag}: ${problem}`);
  return name;
}

/**
 * The fields to send, as the classic tool sends them (strings, or true for a bare flag), after
 * the checks the queue would make, so a typo is reported against its flag before anything is sent.
 * Without --traceparent or --tracestate, the trace context is `ambient`'s (the environment's).
 */
export function messageFields(opts: Options, ambient: () => TraceContext = () => ({})): Record<string, OptionValue> {
  requiredOpt(opts, 'dest', 'a queue name or http://host:port/q/<queue> URL');
  const fields: Record<string, OptionValue> = {};
  for (const key of MESSAGE_KEYS) {
    const v = opts[key];
    if (v === undefined) continue;
    // The command table refuses a bare value option (option-check.ts); only --force_remote may be bare (true).
    if (typeof v === 'boolean' && key !== 'force_remote') throw usage(`--${key}: expected a value, received no value`);
    fields[key] = v;
  }
  // Sent again with the same key (a retry after a lost reply), the create answers the first message.
  const key = stringOpt(opts, 'idempotency-key', 'a key of 1 to 255 printable characters');
  if (key !== undefined) fields.idempotency_key = key;
  Object.assign(fields, traceFrom(fields, ambient));
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
