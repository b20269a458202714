// Unix socket server for the rq1/rq2 framings: one handler call per request frame, replies in order.
import fsp from 'node:fs/promises';
import net from 'node:net';
import type { Logger } from '../log.js';
import { RqError, isErrno } from '../errors.js';
import { FrameDecoder, FrameError, encodeFrame, type Proto } from './framing.js';

export interface SocketServerOptions {
  path: string;
  proto: Proto;
  /** Request payload in, reply payload out. A throw becomes an error reply, never a crash. */
  handle: (payload: string) => Promise<string> | string;
  log: Logger;
  /** A connection with no traffic for this long is closed (default 30 s). */
  idleMs?: number;
  /** Largest request payload accepted (default 64 MiB). */
  maxBytes?: number;
}

export interface SocketServer {
  readonly path: string;
  /** Stops accepting, answers requests already received, waits for running handlers, closes every connection. */
  close(): Promise<void>;
  connections(): number;
}

/** How long a probe of an existing socket file may take before we assume a live but busy owner. */
const PROBE_MS = 2000;

/** The reply sent in place of a handler's answer: classic rq1 clients know `fail`, rq2 clients `error`. */
function errorReply(proto: Proto, text: string): string {
  return JSON.stringify([proto === 'rq1' ? 'fail' : 'error', text]);
}

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
    const onError = (err: Error) => {
      // The in-use text names the path itself ("another process is already listening on …").
      const refusal = isErrno(err, 'EADDRINUSE') ? RqError.of('RQ_ERR_SOCKET_IN_USE', path) : RqError.of('RQ_ERR_SOCKET_PATH', `cannot listen on ${path}: ${err.message}`);
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

export async function listenSocket(opts: SocketServerOptions): Promise<SocketServer> {
  const { path, proto, handle, log } = opts;
  const idleMs = opts.idleMs ?? 30_000;
  const maxBytes = opts.maxBytes;
  /** Per live connection: ends it now if idle, or marks it to end once its backlog is answered. */
  const open = new Map<net.Socket, { finish: () => void; gone: Promise<void> }>();
  let closing = false;

  const answer = async (payload: Buffer): Promise<string> => {
    try {
      return await handle(payload.toString('utf8'));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.error({ err, path }, 'socket request handler failed');
      return errorReply(proto, proto === 'rq1' ? `internal error: ${message}` : message);
    }
  };

  const serve = (socket: net.Socket): void => {
    if (closing) {
      socket.destroy();
      return;
    }
    const decoder = new FrameDecoder(proto, maxBytes);
    const backlog: Array<{ payload: Buffer } | { protocolError: string }> = [];
    let draining: Promise<void> | null = null;
    let inHandler = false;
    /** No more requests will be read: framing broke, the peer half-closed, or the server is closing. */
    let lastRequest = false;
    let ended = false;

    const endConnection = () => {
      if (ended) return;
      ended = true;
      // end() flushes the replies; destroy() then frees the fd even if the peer never closes its side.
      socket.end(() => socket.destroy());
    };

    const send = async (reply: string): Promise<void> => {
      let frame: Buffer;
      try {
        frame = encodeFrame(proto, reply);
      } catch (err) {
        log.error({ err, path }, 'socket reply could not be framed');
        frame = encodeFrame(proto, errorReply(proto, proto === 'rq1' ? `internal error: ${(err as Error).message}` : (err as Error).message));
      }
      if (socket.destroyed || ended) return;
      // Wait for the peer to take the reply before answering the next one, so a client that
      // pipelines without reading cannot make us buffer without bound.
      if (!socket.write(frame)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            socket.off('drain', done);
            socket.off('close', done);
            resolve();
          };
          socket.on('drain', done);
          socket.on('close', done);
        });
      }
    };

    const drain = () => {
      if (draining) return;
      draining = (async () => {
        while (backlog.length > 0 && !socket.destroyed) {
          const item = backlog.shift()!;
          if ('protocolError' in item) {
            await send(errorReply(proto, `protocol error: ${item.protocolError}`));
            backlog.length = 0;
            break;
          }
          inHandler = true;
          const reply = await answer(item.payload);
          inHandler = false;
          await send(reply);
        }
      })().finally(() => {
        draining = null;
        if (lastRequest && !socket.destroyed) endConnection();
      });
    };

    open.set(socket, {
      finish: () => {
        lastRequest = true;
        if (!draining) endConnection();
      },
      gone: new Promise((resolve) => socket.once('close', () => resolve())),
    });

    socket.setTimeout(idleMs);
    socket.on('timeout', () => {
      // The reply write re-arms the timer, so a slow handler is waited for, not cut off.
      if (inHandler) return;
      if (draining || ended) {
        log.warn({ path }, 'socket peer stopped reading replies; dropping the connection');
        socket.destroy();
        return;
      }
      log.debug({ path }, 'closing idle socket connection');
      endConnection();
    });
    socket.on('data', (chunk: Buffer) => {
      if (lastRequest) return;
      try {
        for (const payload of decoder.push(chunk)) backlog.push({ payload });
      } catch (err) {
        if (!(err instanceof FrameError)) throw err;
        log.warn({ path, err: err.message }, 'socket protocol error; closing the connection');
        for (const payload of err.frames) backlog.push({ payload });
        backlog.push({ protocolError: err.message });
        lastRequest = true;
      }
      drain();
    });
    socket.on('end', () => {
      // The peer half-closed after sending: answer what it sent, then close our side.
      if (decoder.insideFrame() && !lastRequest) backlog.push({ protocolError: `connection ended inside a frame (${decoder.pending()} bytes pending)` });
      lastRequest = true;
      if (draining) return;
      if (backlog.length > 0) drain();
      else endConnection();
    });
    socket.on('error', (err) => {
      log.debug({ path, err: err.message }, 'socket connection error');
    });
    socket.on('close', () => {
      open.delete(socket);
    });
  };

  await removeStale(path, log);
  // allowHalfOpen: a client may shut down its write side right after the request and still read the reply.
  const server = net.createServer({ allowHalfOpen: true }, serve);
  await bindPrivate(server, path);
  server.on('error', (err) => log.error({ err, path }, 'socket server error'));
  log.debug({ path, proto }, 'socket listening');

  let closed: Promise<void> | null = null;
  return {
    path,
    connections: () => open.size,
    close() {
      closed ??= (async () => {
        closing = true;
        // server.close resolves only once every connection is gone; libuv unlinks the socket file.
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        // Each connection ends once its running handler has answered (see drain's finally).
        const gone = [...open.values()].map((c) => {
          c.finish();
          return c.gone;
        });
        await Promise.all(gone);
        await stopped;
      })();
      return closed;
    },
  };
}
