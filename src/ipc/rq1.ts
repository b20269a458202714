// Request/reply conventions on top of the framing: rq1 `command SP argument` with JSON replies, and rq2 `[command, payload]`.
import { RqError, shown } from '../errors.js';
import { request, type RequestOptions } from './socket-client.js';

function parseReply(sockPath: string, command: string, raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw RqError.of('RQ_ERR_PROTOCOL', `reply from ${sockPath} to ${command} is not JSON: ${shown(raw)}`);
  }
}

/** A queue socket command (spec §7): the argument travels as JSON, `{}` when there is none. */
export async function queueCommand(sockPath: string, command: string, arg?: unknown, opts?: RequestOptions): Promise<unknown> {
  const raw = await request(sockPath, 'rq1', `${command} ${JSON.stringify(arg ?? {})}`, opts);
  return parseReply(sockPath, command, raw);
}

/** A supervisor socket command (spec §6.2): its argument is raw text such as a queue name. */
export async function mgrCommand(sockPath: string, command: string, rawArg = '', opts?: RequestOptions): Promise<unknown> {
  // Always a space, as the classic client sends: `ping ` with an empty argument.
  const raw = await request(sockPath, 'rq1', `${command} ${rawArg}`, opts);
  return parseReply(sockPath, command, raw);
}

/** Splits an rq1 request at its first space; a request without one has an empty argument. */
export function parseRequest(payload: string): { command: string; arg: string } {
  const space = payload.indexOf(' ');
  return space < 0 ? { command: payload, arg: '' } : { command: payload.slice(0, space), arg: payload.slice(space + 1) };
}

export function parseJsonArg(arg: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(arg) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** A timers socket command (spec §6.6 rq2): `[command, payload]` out, a JSON array back. */
export async function rq2Command(sockPath: string, command: string, payload?: unknown, opts?: RequestOptions): Promise<unknown[]> {
  const raw = await request(sockPath, 'rq2', JSON.stringify([command, payload ?? null]), opts);
  const reply = parseReply(sockPath, command, raw);
  if (!Array.isArray(reply)) throw RqError.of('RQ_ERR_PROTOCOL', `reply from ${sockPath} to ${command}: expected a JSON array, received ${shown(raw)}`);
  return reply;
}
