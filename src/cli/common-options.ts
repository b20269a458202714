// Options several rq commands share, written once for the command table (command-spec.ts).
import type { ArgSpec, OptionSpec } from './command-spec.js';

/** Every command takes it; the parser and the help add it to each command's own options. */
export const ROOT_OPTION: OptionSpec = {
  name: 'root',
  arg: 'DIR',
  expected: 'a directory path',
  help: 'the rq root to work on (default: $RQ_ROOT, else the directory rq is installed in)',
};

/** Before the root is known (a bare `--msg_id`); refusals after it give a full id of the root (root-host.ts). */
export const MSG_ID_EXPECTED = 'a full message id as sendmesg prints it (or <queue>/<id>, or the id alone)';

export const MSG_ID: OptionSpec = {
  name: 'msg_id',
  arg: 'FULLID',
  required: true,
  expected: MSG_ID_EXPECTED,
  help: 'the message: its full id as sendmesg prints it (the host part is ignored), <queue>/<id>, or the id alone (its queue is looked up)',
};

/** The message as the word after the command (`rq statusmesg <msg_id>`), or as --msg_id. */
export const MSG_ARG: ArgSpec[] = [{ name: 'msg_id', option: 'msg_id', required: true }];
export const MSG_ID_OR_ARG: OptionSpec = { ...MSG_ID, required: false };

/** The queue as the word after the command (`rq tags <queue>`), or as --queue. */
export const QUEUE_ARG: ArgSpec[] = [{ name: 'queue', option: 'queue', required: true }];

export const QUEUE: OptionSpec = { name: 'queue', arg: 'QUEUE', required: true, expected: 'a queue name', help: 'the queue' };
export const QUEUE_OR_ARG: OptionSpec = { ...QUEUE, required: false };

export const JSON_FLAG: OptionSpec = { name: 'json', kind: 'flag', help: 'print the answer as JSON instead of lines' };

export const OFFSET: OptionSpec = { name: 'offset', arg: 'N', expected: 'a whole number', help: 'skip the first N entries (default 0)' };

/** A page size; `max` and `fallback` as the command's queue takes them. */
export function limitOption(max: number, fallback: number): OptionSpec {
  return { name: 'limit', arg: 'N', expected: 'a whole number', help: `list at most N entries (1-${max}, default ${fallback})` };
}

export const REASON: OptionSpec = {
  name: 'reason',
  arg: 'TEXT',
  expected: 'a reason text',
  help: "why, for the message's history and status (default: by cli:$USER)",
};
