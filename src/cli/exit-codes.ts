// rq's exit statuses (docs/cli.md, "Exit status"): one table, and the status of an error that ended a command.
import { isRqError } from '../errors.js';

export const EXIT = {
  /** The queue said ok; `wait`: the message is done. */
  ok: 0,
  /** The queue said fail (printed on stdout), or another problem; `wait`: the message ended in err. */
  fail: 1,
  /** The command line is wrong: unknown option, option without its value, bad value, stray word. */
  usage: 2,
  /** The queue's process (or rq-mgr) does not answer, or stopped while asked. */
  unreachable: 3,
  /** `wait`, `sendmesg --wait`: the message had not finished when the timeout came. */
  timeout: 4,
  /** `wait`, `tail`: no such message, or it was deleted before it finished. */
  notFound: 6,
} as const;

/** The status for an error thrown by a command (it is printed as one `rq: ` line). */
export function exitFor(err: unknown): number {
  if (isRqError(err, 'RQ_ERR_USAGE')) return EXIT.usage;
  if (isRqError(err, 'RQ_ERR_NO_REPLY')) return EXIT.unreachable;
  return EXIT.fail;
}
