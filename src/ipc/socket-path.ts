// The last check before any bind or connect of a unix socket: a path the kernel cannot hold whole is refused, never cut short.
import { RqError } from '../errors.js';
import { SOCKET_PATH_MAX_BYTES } from '../config/socket-paths.js';

/**
 * The refusal of a path longer than sun_path holds, or null. Queue names and roots are checked
 * long before this (config/socket-paths.ts); this is what stands if a check was missed, since libuv
 * would bind or connect to the path cut at 107 bytes, which may be another queue's socket.
 */
export function socketPathRefusal(path: string): RqError | null {
  const n = Buffer.byteLength(path, 'utf8');
  return n > SOCKET_PATH_MAX_BYTES ? RqError.of('RQ_ERR_SOCKET_PATH_TOO_LONG', path, n, SOCKET_PATH_MAX_BYTES) : null;
}

/** `path`, when it fits; throws RQ_ERR_SOCKET_PATH_TOO_LONG otherwise. */
export function requireSocketPath(path: string): string {
  const refusal = socketPathRefusal(path);
  if (refusal) throw refusal;
  return path;
}
