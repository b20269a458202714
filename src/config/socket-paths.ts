// Which unix socket paths under a root fit in the kernel's sun_path: the longest queue name this root can hold, and whether its own sockets fit.
import path from 'node:path';
import { queuePaths, rootPaths } from './paths.js';

/**
 * The most bytes a unix socket path may have: Linux's sun_path is 108 bytes and holds the
 * terminating NUL. libuv copies a longer path cut short instead of refusing it, and the cut path
 * can be another queue's socket: two queues whose names share their first characters would meet
 * on one socket.
 */
export const SOCKET_PATH_MAX_BYTES = 107;

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Every socket a queue process listens on. A socket added to a queue belongs here, or its names are not checked. */
export function queueSockets(root: string, name: string): string[] {
  const p = queuePaths(root, name);
  return [p.sock, p.eventsSock];
}

export interface QueueNameRoom {
  /** The most bytes a queue name may have under this root (a character each for the allowed ASCII names). */
  maxBytes: number;
  /** The socket that sets it, as the root shows it: `queues/<q>/events.sock`. */
  socket: string;
}

/** What the longest socket path of a queue leaves for its name under this root. */
export function queueNameRoom(root: string): QueueNameRoom {
  // Measured on a one-byte name, so the joins are the ones a real name gets.
  let longest = '';
  for (const s of queueSockets(root, 'q')) if (bytes(s) > bytes(longest)) longest = s;
  return { maxBytes: SOCKET_PATH_MAX_BYTES - (bytes(longest) - 1), socket: `queues/<q>/${path.basename(longest)}` };
}

/**
 * Why `name` cannot be a queue of the root whose `room` this is (its socket paths would not fit),
 * or null. The room is worked out once per root by its caller (it costs the ~20 joins of
 * queuePaths). `field` names what the caller calls the name (`queue[name]` over HTTP). Bytes count,
 * since the kernel counts them: a name with non-ASCII characters says both.
 */
export function queueNameFitProblem(room: QueueNameRoom, name: string, field = 'queue name'): string | null {
  const n = bytes(name);
  if (n <= room.maxBytes) return null;
  const received = n === name.length ? `${n} characters` : `${name.length} characters (${n} bytes in UTF-8)`;
  return `${field}: expected at most ${room.maxBytes} characters for this root (socket path ${room.socket} must fit in ${SOCKET_PATH_MAX_BYTES} bytes), received ${received}`;
}

/**
 * Why rq-mgr cannot run on this root (the supervisor's or the timers' socket path would not fit),
 * or null. A root that passes leaves room for queue names of at least one character.
 */
export function rootSocketProblem(root: string): string | null {
  const p = rootPaths(root);
  for (const [label, sock] of [
    ['config/queuemgr.sock', p.mgrSock],
    ['timers/sock', p.timersSock],
  ] as const) {
    const n = bytes(sock);
    if (n <= SOCKET_PATH_MAX_BYTES) continue;
    const rootMax = SOCKET_PATH_MAX_BYTES - (n - bytes(root));
    return `root ${root}: expected a path of at most ${rootMax} bytes (socket path ${label} must fit in ${SOCKET_PATH_MAX_BYTES} bytes), received ${bytes(root)} bytes`;
  }
  return null;
}
