// Catalogue codes on the wire: a client that asks at connect gets refusals as ["fail", text, code] (and a detail, if any); a classic client, who never asks, gets ["fail", text] byte for byte.
import type { ErrorCode, RqError } from '../errors.js';

/** The command that asks for codes on this connection (queue and rq-mgr sockets, rq1; timers socket, rq2). */
export const CODES_COMMAND = 'reply_codes';
/** The request rq's own clients send first on each new rq1 connection (queue, rq-mgr); its reply is dropped. */
export const CODES_HELLO = `${CODES_COMMAND} {}`;
/** The same request in the rq2 framing (`[command, payload]`), for the timers socket. */
export const CODES_HELLO_RQ2 = JSON.stringify([CODES_COMMAND, null]);

/** What a server knows of one connection: whether its client asked for codes. */
export interface Connection {
  codes: boolean;
}

/**
 * A catalogue error as the refusal this connection reads: with its code when the client asked, the
 * classic pair otherwise. `head` is the socket's refusal word: `fail`, or `error` for an unknown
 * command (rq-mgr) and on the rq2 timers socket. An error with a detail (RqError.withDetail) sends it
 * after the code.
 */
export function refusalOf(
  conn: Connection,
  err: RqError,
  head: 'fail' | 'error' | 'ERROR' = 'fail',
): [string, string] | [string, string, ErrorCode] | [string, string, ErrorCode, object] {
  if (!conn.codes) return [head, err.message];
  return err.detail ? [head, err.message, err.code, err.detail] : [head, err.message, err.code];
}
