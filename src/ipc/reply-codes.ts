// Catalogue codes on the wire: a client that asks at connect gets refusals as ["fail", text, code]; a classic client, who never asks, gets ["fail", text] byte for byte.
import type { ErrorCode, RqError } from '../errors.js';

/** The command that asks for codes on this connection. */
export const CODES_COMMAND = 'reply_codes';
/** The request rq's own clients send first on each new queue connection; its reply is dropped. */
export const CODES_HELLO = `${CODES_COMMAND} {}`;

/** What a server knows of one connection: whether its client asked for codes. */
export interface Connection {
  codes: boolean;
}

/** A catalogue error as the refusal this connection reads: with its code when the client asked, the classic pair otherwise. */
export function refusalOf(conn: Connection, err: RqError): [string, string] | [string, string, ErrorCode] {
  return conn.codes ? ['fail', err.message, err.code] : ['fail', err.message];
}
