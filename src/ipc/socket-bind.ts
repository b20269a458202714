// Claiming a unix socket path: a stale file left by a dead process is removed, a live one refused, and the new socket is born private.
import fsp from 'node:fs/promises';
import net from 'node:net';
import type { Logger } from '../log.js';
import { RqError, isErrno } from '../errors.js';
import { requireSocketPath } from './socket-path.js';

/** How long a probe of an existing socket file may take before we assume a live but busy owner. */
const PROBE_MS = 2000;

/** Is some process still accepting on this socket file? */
function probe(path: string): Promise<'live' | 'stale' | 'gone'> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(path);
    const timer = setTimeout(() => {
      sock.destroy();
      resolve('live');
    }, PROBE_MS);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve('live');
    });
    sock.once('error', (err) => {
      clearTimeout(timer);
      if (isErrno(err, 'ECONNREFUSED')) resolve('stale');
      else if (isErrno(err, 'ENOENT')) resolve('gone');
      // A full backlog: the owner is alive, just busy.
      else if (isErrno(err, 'EAGAIN')) resolve('live');
      else reject(err);
    });
  });
}

/**
 * Clears the way for listen: removes a socket file left by a dead process. A live socket is
 * refused rather than stolen, since two servers on one queue would break the single-writer rule;
 * anything that is not a socket is never deleted, since the path may be a misconfiguration.
 */
export async function removeStale(path: string, log: Logger): Promise<void> {
  // The probe connects: cut short, it could find another queue's socket live (or remove it as stale).
  requireSocketPath(path);
  let st;
  try {
    st = await fsp.lstat(path);
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return;
    throw RqError.of('RQ_ERR_SOCKET_PATH', `cannot check socket path ${path}: ${(err as Error).message}`).causedBy(err);
  }
  if (!st.isSocket()) {
    throw RqError.of('RQ_ERR_SOCKET_PATH', `${path} exists and is not a socket; refusing to delete it (remove it by hand if it is not needed)`);
  }
  let state: 'live' | 'stale' | 'gone';
  try {
    state = await probe(path);
  } catch (err) {
    throw RqError.of('RQ_ERR_SOCKET_PATH', `cannot check socket ${path}: ${(err as Error).message}`).causedBy(err);
  }
  if (state === 'live') throw RqError.of('RQ_ERR_SOCKET_IN_USE', path);
  if (state === 'gone') return;
  log.info({ path }, 'removing stale socket file');
  await fsp.rm(path, { force: true });
}

/**
 * Binds with umask 0177 so the socket file is born 0600: a chmod after listen would leave a window
 * where other users could connect. Node binds a pipe synchronously inside listen() (outside cluster
 * workers, which we never use), so the umask is restored before any other code in this process runs
 * and nothing else is created under it. A listening directory of mode 0700 would also work but would
 * move the socket away from the path classic clients expect.
 */
export function bindPrivate(server: net.Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // Bound cut short, this queue would listen on another's socket path.
    requireSocketPath(path);
    const onError = (err: Error) => {
      // The in-use text names the path itself ("another process is already listening on …").
      const refusal = isErrno(err, 'EADDRINUSE')
        ? RqError.of('RQ_ERR_SOCKET_IN_USE', path)
        : RqError.of('RQ_ERR_SOCKET_PATH', `cannot listen on ${path}: ${err.message}`);
      reject(refusal.causedBy(err));
    };
    server.once('error', onError);
    const previous = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off('error', onError);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
}
