// rq's exit statuses (docs/cli.md, "Exit status"): one table, and the status of an error that ended a command.
import { isRqError } from '../errors.js';

export const EXIT = {
  /** The queue said ok; `wait`: the message is done. */
  ok: 0,
  /** The queue said fail (printed on stdout), or another problem; `wait`: the message ended in err. */
  fail: 1,
  /** The command line is wrong: unknown option, option without its value, bad value, stray word. */
  usage: 2,
  /** The queue's process (or rq-mgr) does not answer, or stopped while asked; no queue answers and rq-mgr is not running. */
  unreachable: 3,
  /** `wait`, `sendmesg --wait`: the message had not finished when the timeout came. */
  timeout: 4,
  /** `wait`, `tail`: no such message, or it was deleted before it finished; any command: no queue holds an id given alone. */
  notFound: 6,
} as const;

/** The status for an error thrown by a command (it is printed as one `rq: ` line). */
export function exitFor(err: unknown): number {
  if (isRqError(err, 'RQ_ERR_USAGE')) return EXIT.usage;
  if (isRqError(err, 'RQ_ERR_NO_REPLY') || isRqError(err, 'RQ_ERR_MGR_NOT_RUNNING')) return EXIT.unreachable;
  if (isRqError(err, 'RQ_ERR_MSG_IN_NO_QUEUE')) return EXIT.notFound;
  return EXIT.fail;
}
