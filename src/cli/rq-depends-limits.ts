// The rq tool's `undepend` (rq-beyond §B8.3) and `limits` (§B12.2): stop waiting for dependencies; the concurrency slots rq-mgr hands out.
import { RqError, isRqError, shown } from '../errors.js';
import { rootPaths } from '../config/paths.js';
import { type LimitKeyStatus, MgrClient } from '../ipc/mgr-client.js';
import { readDepends } from '../message/depends.js';
import { checkExpandedKey } from '../message/limit-key.js';
import { actor, ask, replyLine } from './queue-ask.js';
import type { RqCommand } from './rq-command.js';
import { JSON_FLAG, MSG_ARG, MSG_ID_OR_ARG } from './common-options.js';
import { messageTarget } from './message-target.js';
import { refusalDoc } from './json-output.js';
import { type Options, flagOpt, stringOpt, usage } from './rq-options.js';
import { fleetScope } from '../ipc/limit-scope.js';

const REFS_EXPECTED = 'a comma-separated list of message refs (<queue>/<id>)';

/** `--depends a/x,b/y` or `--all` (one of them, not both): the refs to stop waiting for, or every one. */
function whichOpt(opts: Options): { depends: string[] } | { all: true } {
  const all = flagOpt(opts, 'all');
  const given = stringOpt(opts, 'depends', REFS_EXPECTED);
  if (all && given !== undefined) throw usage('--depends or --all: expected one of them, received both');
  if (all) return { all: true };
  if (given === undefined) throw usage('--depends or --all: expected one of them, received neither');
  // Each ref is checked as a create checks `depends` (its syntax); the queue knows this host's full ids.
  const refs = readDepends(given, undefined, (field, expected, got) => usage(`--${field}: expected ${expected}, received ${shown(got)}`));
  return { depends: refs };
}

/** `rq undepend`: `ok <refs still awaited, comma-joined>` or `ok none` (the message is released to the que). */
const undepend: RqCommand = {
  summary: 'stop a queued message waiting for some of its dependencies, or for all of them; prints the refs it still waits for, or none',
  args: MSG_ARG,
  options: [
    MSG_ID_OR_ARG,
    { name: 'depends', arg: '<queue>/<id>,…', expected: REFS_EXPECTED, help: 'the dependencies to stop waiting for (or --all)' },
    { name: 'all', kind: 'flag', help: 'stop waiting for every dependency' },
  ],
  examples: ['rq undepend --msg_id deploy/20261125.2332.15.563.2254795 --all'],
  run: async ({ opts, root, io }) => {
    const target = await messageTarget(opts, root);
    const which = whichOpt(opts);
    const a = await ask(root, target.queue, (c) => c.undepend(target.id, { ...which, actor: actor(io.env) }));
    io.stdout(a.ok ? `ok ${a.value.length ? a.value.join(',') : 'none'}` : replyLine(a));
    return a.ok ? 0 : 1;
  },
};

/** rq-mgr holds the limits table; it answers at once or not at all. */
const MGR_TIMEOUT_MS = 10_000;

/**
 * `<key> <in use>/<concurrency> waiting <n>`, ` (<k> orphaned)` for slots held by scripts of a dead queue process; a key the
 * fleet shares says so, how many of its slots other hosts hold (seen while runs wait here), and why its waiters do not move
 * while this host cannot take its slots (etcd does not answer).
 */
export function limitLine(key: string, s: LimitKeyStatus): string {
  const orphaned = s.holders.filter((h) => h.orphaned).length;
  const scope = fleetScope(s);
  const fleet = scope ? ` ${scope}` : '';
  return `${key} ${s.holders.length}/${s.concurrency} waiting ${s.waiting.length}${orphaned ? ` (${orphaned} orphaned)` : ''}${fleet}`;
}

/** `rq limits`: `ok <n>` then one line per key rq-mgr knows (one with holders or waiters), by name; `--json` the table as rq-mgr answers it. */
const limits: RqCommand = {
  summary: 'list the concurrency-limit keys in use, from rq-mgr: slots held/concurrency and messages waiting for one',
  args: [{ name: 'key', option: 'key' }],
  options: [{ name: 'key', arg: 'KEY', expected: 'a limit key of 1-256 characters without control characters', help: 'only this key' }, JSON_FLAG],
  examples: ['rq limits reports', 'rq limits --key reports --json'],
  run: async ({ opts, root, io }) => {
    const expected = 'a limit key of 1-256 characters without control characters';
    const given = stringOpt(opts, 'key', expected);
    const key = given === undefined ? undefined : checkExpandedKey(given, (field, _e, got) => usage(`--key: expected ${expected}, received ${shown(got)}`));
    const json = flagOpt(opts, 'json');
    const sock = rootPaths(root).mgrSock;
    let a;
    try {
      a = await new MgrClient(sock, MGR_TIMEOUT_MS).limitStatus(key);
    } catch (err) {
      if (isRqError(err, 'RQ_ERR_NO_REPLY')) throw RqError.of('RQ_ERR_NO_REPLY', `rq-mgr does not answer, and it holds the limits table (${err.message})`);
      throw err;
    }
    if (!a.ok) {
      io.stdout(json ? JSON.stringify(refusalDoc(a)) : `fail ${a.text}`);
      return 1;
    }
    const keys = Object.keys(a.value).sort();
    if (json) io.stdout(JSON.stringify(Object.fromEntries(keys.map((k) => [k, a.value[k]]))));
    else for (const line of [`ok ${keys.length}`, ...keys.map((k) => limitLine(k, a.value[k]))]) io.stdout(line);
    return 0;
  },
};

export const DEPENDS_LIMITS_COMMANDS: Record<string, RqCommand> = { undepend, limits };
