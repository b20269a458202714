// The help texts and command-line checks of rq-mgr and rq-init (spec §6.1): their commands, options and examples in one place.
import fs from 'node:fs';
import { shown } from '../errors.js';
import { rootSocketProblem } from '../config/socket-paths.js';
import { closest } from './option-check.js';

const ROOT_LINE = '  --root DIR             the rq root (default: $RQ_ROOT, else the directory rq is installed in)';

export const MGR_HELP = `rq-mgr: control the rq supervisor, which runs a process per queue, the web server and the timers

Usage: rq-mgr <command> [options]

Commands:
  start                  start rq-mgr in the background (log: <root>/log/queuemgr.log); exit 1 if it is running
  stop [--timeout S]     TERM rq-mgr, wait up to S seconds (1-3600, default 20), then KILL it
  restart [--timeout S]  stop, then start
  status                 whether it runs, and each queue process; exit 3 when it is not running
  run [--watch-stdin]    run in the foreground, logging to stdout (the same as rq-init)
  zap                    remove the pid file and socket left by an rq-mgr that died
  reindex <queue>        have the queue rebuild its tag index from its messages; prints ok <pairs>

Options:
${ROOT_LINE}
  --timeout S            stop, restart: seconds to wait for rq-mgr to exit before KILL
  --watch-stdin          run: stop when standard input closes (for a parent process that owns rq-mgr)
  -h, --help             print this help and exit 0

Exit: 0 ok, 1 failure or a bad command line, 3 status: not running.

Examples:
  $ rq-mgr start --root /srv/rq
  $ rq-mgr stop --timeout 60
  $ rq-mgr reindex build`;

export const INIT_HELP = `rq-init: run the rq supervisor (rq-mgr) in the foreground, logging to stdout, for systemd, runit, s6 and containers

Usage: rq-init [options]

It runs every queue under <root>/queues, the web server and the timers until TERM or INT, then stops
them all (running scripts get TERM, then KILL after their grace). rq-mgr start|stop|status is the
background alternative.

Options:
${ROOT_LINE}
  --watch-stdin          stop when standard input closes (for a parent process that owns rq-init)
  -h, --help             print this help and exit 0

Exit: 0 after a clean stop, 1 when it cannot start (no such root, a root path too long for its sockets, bad
config/config.json, already running).

Example:
  $ rq-init --root /srv/rq`;

const OPTIONS = ['root', 'timeout', 'watch-stdin'];
/** The commands that start rq-mgr, refused on a root too long for its sockets. */
const STARTS = new Set(['start', 'restart', 'run']);

/**
 * What is wrong with an rq-mgr / rq-init command line, or null: an unknown option (with the
 * closest valid one), a stray word, a root that is not a directory.
 */
export function mgrLineProblem(opts: Record<string, unknown>, rest: string[], command: string, root: string, rootFlag: string | undefined): string | null {
  for (const key of Object.keys(opts)) {
    if (OPTIONS.includes(key)) continue;
    const near = closest(key, OPTIONS);
    return `unknown option --${key}${near ? ` (did you mean --${near}?)` : ''}; valid options: ${OPTIONS.map((o) => `--${o}`).join(', ')}`;
  }
  if (opts.root === true) return '--root: expected a directory path, received no value';
  const words = command === 'reindex' ? 1 : 0;
  if (rest.length > words) return `${command}: unexpected argument ${shown(rest[words])}`;
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory())
    return `${rootFlag !== undefined ? `--root ${rootFlag}` : `root ${root}`}: no such directory`;
  // Said here, not after `start` has waited for a daemon that exited at once.
  if (STARTS.has(command)) return rootSocketProblem(root);
  return null;
}
