// Options several rq commands share, written once for the command table (command-spec.ts).
import type { OptionSpec } from './command-spec.js';

/** Every command takes it; the parser and the help add it to each command's own options. */
export const ROOT_OPTION: OptionSpec = {
  name: 'root',
  arg: 'DIR',
  expected: 'a directory path',
  help: 'the rq root to work on (default: $RQ_ROOT, else the directory rq is installed in)',
};

export const MSG_ID_EXPECTED = 'a full message id such as http://127.0.0.1:3333/q/<queue>/20261121.1643.46.613.2164022 (or <queue>/<id>)';

export const MSG_ID: OptionSpec = {
  name: 'msg_id',
  arg: 'FULLID',
  required: true,
  expected: MSG_ID_EXPECTED,
  help: 'the message: its full id as sendmesg prints it (the host part is ignored), or <queue>/<id>',
};

export const QUEUE: OptionSpec = { name: 'queue', arg: 'QUEUE', required: true, expected: 'a queue name', help: 'the queue' };

export const JSON_FLAG: OptionSpec = { name: 'json', kind: 'flag', help: 'print the answer as JSON instead of lines' };

export const OFFSET: OptionSpec = { name: 'offset', arg: 'N', expected: 'a whole number', help: 'skip the first N entries (default 0)' };

/** A page size; `max` and `fallback` as the command's queue takes them. */
export function limitOption(max: number, fallback: number): OptionSpec {
  return { name: 'limit', arg: 'N', expected: 'a whole number', help: `list at most N entries (1-${max}, default ${fallback})` };
}

export const REASON: OptionSpec = { name: 'reason', arg: 'TEXT', expected: 'a reason text', help: 'why, for the message\'s history and status (default: by cli:$USER)' };
