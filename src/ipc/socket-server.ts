// Unix socket server for the rq1/rq2 framings: one handler call per request frame, replies in order.
import net from 'node:net';
import type { Logger } from '../log.js';
import { RqError } from '../errors.js';
import { refuseSocket } from './refuse-socket.js';
import { bindPrivate, removeStale } from './socket-bind.js';
import { FrameDecoder, FrameError, encodeFrame, type Proto } from './framing.js';
import { type Connection, refusalOf } from './reply-codes.js';

export interface SocketServerOptions {
  path: string;
  proto: Proto;
  /** Request payload in, reply payload out; `conn` is this connection's own state. A throw becomes an error reply, never a crash. */
  handle: (payload: string, conn: Connection) => Promise<string> | string;
  log: Logger;
  /** A connection with no traffic for this long is closed (default 30 s). */
  idleMs?: number;
  /** Largest request payload accepted (default 64 MiB). */
  maxBytes?: number;
  /** Connections at once; a new one past it gets a busy error reply and is closed (default 512). */
  maxConnections?: number;
  /** A request begun must be whole within this long (default 60 s): a slow drip resets the idle timer, not this one. */
  requestMs?: number;
}

export const DEFAULT_MAX_SOCKET_CONNECTIONS = 512;
const DEFAULT_REQUEST_MS = 60_000;
/** How long a refused connection may take to read its busy reply before it is cut. */
const REFUSED_LINGER_MS = 2000;

export interface SocketServer {
  readonly path: string;
  /** Stops accepting, answers requests already received, waits for running handlers, closes every connection. */
  close(): Promise<void>;
  connections(): number;
}

/** The reply sent in place of a handler's answer: classic rq1 clients know `fail`, rq2 clients `error`; with its code when the connection asked. */
function errorReply(proto: Proto, err: RqError, conn: Connection = { codes: false }): string {
  return JSON.stringify(refusalOf(conn, err, proto === 'rq1' ? 'fail' : 'error'));
}

export async function listenSocket(opts: SocketServerOptions): Promise<SocketServer> {
  const { path, proto, handle, log } = opts;
  const idleMs = opts.idleMs ?? 30_000;
  const maxBytes = opts.maxBytes;
  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_SOCKET_CONNECTIONS;
  const requestMs = opts.requestMs ?? DEFAULT_REQUEST_MS;
  let refusedUnlogged = 0;
  /** Per live connection: ends it now if idle, or marks it to end once its backlog is answered. */
  const open = new Map<net.Socket, { finish: () => void; gone: Promise<void> }>();
  let closing = false;

  const answer = async (payload: Buffer, conn: Connection): Promise<string> => {
    try {
      return await handle(payload.toString('utf8'), conn);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.error({ err, path }, 'socket request handler failed');
      return errorReply(proto, proto === 'rq1' ? RqError.of('RQ_ERR_INTERNAL', message) : new RqError('RQ_ERR_INTERNAL', message), conn);
    }
  };

  /** The busy reply goes out before any request is read, so nothing was done. */
  const refuse = (socket: net.Socket): void => {
    refuseSocket(socket, encodeFrame(proto, errorReply(proto, RqError.of('RQ_ERR_SOCKET_BUSY', open.size, path))), REFUSED_LINGER_MS);
    if (refusedUnlogged++ === 0)
      setTimeout(() => {
        log.warn({ path, refused: refusedUnlogged, open: open.size }, 'socket connections refused: too many open');
        refusedUnlogged = 0;
      }, REFUSED_LINGER_MS).unref();
  };

  const serve = (socket: net.Socket): void => {
    if (closing) {
      socket.destroy();
      return;
    }
    if (open.size >= maxConnections) return refuse(socket);
    const decoder = new FrameDecoder(proto, maxBytes);
    const conn: Connection = { codes: false };
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
        frame = encodeFrame(
          proto,
          errorReply(
            proto,
            proto === 'rq1' ? RqError.of('RQ_ERR_INTERNAL', (err as Error).message) : new RqError('RQ_ERR_INTERNAL', (err as Error).message),
            conn,
          ),
        );
      }
      if (socket.destroyed || ended) return;
      // A request read along with this one runs first (a create starts its script), and the reply
      // goes with the next turn of the event loop instead of a write of its own on that path.
      if (backlog.length > 0 && socket.writableCorked === 0) {
        socket.cork();
        setImmediate(() => socket.uncork());
      }
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
            await send(errorReply(proto, RqError.of('RQ_ERR_PROTOCOL', `protocol error: ${item.protocolError}`), conn));
            backlog.length = 0;
            break;
          }
          inHandler = true;
          const reply = await answer(item.payload, conn);
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
      // A request begun and then silent for idleMs is told why it is cut, as one past requestMs is.
      if (decoder.insideFrame() && !lastRequest) {
        protocolError(`request not whole after ${idleMs} ms without a byte (${decoder.pending()} bytes received)`);
        drain();
        return;
      }
      log.debug({ path }, 'closing idle socket connection');
      endConnection();
    });
    /** Runs from a request's first byte to its last. */
    let requestTimer: NodeJS.Timeout | null = null;
    const stopRequestTimer = () => {
      if (requestTimer) clearTimeout(requestTimer);
      requestTimer = null;
    };
    const protocolError = (text: string) => {
      log.warn({ path, err: text }, 'socket protocol error; closing the connection');
      backlog.push({ protocolError: text });
      lastRequest = true;
      stopRequestTimer();
    };
    socket.on('data', (chunk: Buffer) => {
      if (lastRequest) return;
      try {
        for (const payload of decoder.push(chunk)) backlog.push({ payload });
      } catch (err) {
        if (!(err instanceof FrameError)) throw err;
        for (const payload of err.frames) backlog.push({ payload });
        protocolError(err.message);
      }
      if (lastRequest || !decoder.insideFrame()) stopRequestTimer();
      else
        requestTimer ??= setTimeout(() => {
          protocolError(`request not whole after ${requestMs} ms (${decoder.pending()} bytes received)`);
          drain();
        }, requestMs);
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
      stopRequestTimer();
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
