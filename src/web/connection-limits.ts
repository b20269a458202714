// Bounds the web's open connections in total and per client address: the excess is answered 503 or 429 with Retry-After on the raw socket, then closed.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import { refuseSocket } from '../ipc/refuse-socket.js';
import type { WebLimits } from '../config/web-limits.js';

/** How long a refused socket may take to read its answer before it is cut. */
const LINGER_MS = 2000;
/** Refusals are logged at most this often, with a count: a flood must not become a flood of log lines. */
const LOG_EVERY_MS = 10_000;

export interface ConnectionCounts {
  open(): number;
  refused(): number;
}

function answer(status: 503 | 429, text: string, retryAfterS: number): string {
  const body = `${text}\n`;
  const reason = status === 503 ? 'Service Unavailable' : 'Too Many Requests';
  return `HTTP/1.1 ${status} ${reason}\r\nRetry-After: ${retryAfterS}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * Node's `maxConnections` drops the socket without a word, so node's own connection listener is
 * wrapped instead: a connection over a limit never reaches the HTTP parser, it gets its answer at
 * once (refuseSocket), and no request was read, so none is lost.
 */
export function limitConnections(server: Server, limits: WebLimits, log: Logger): ConnectionCounts {
  const node = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const perAddress = new Map<string, number>();
  let open = 0;
  let refused = 0;
  let unlogged = 0;
  let loggedAt = 0;

  const refuse = (socket: Socket, err: RqError) => {
    const status = err.status as 503 | 429;
    const text = err.message;
    refused++;
    unlogged++;
    if (Date.now() - loggedAt >= LOG_EVERY_MS) {
      log.warn({ status, refused: unlogged, open, address: socket.remoteAddress, err: text }, 'connections refused');
      loggedAt = Date.now();
      unlogged = 0;
    }
    refuseSocket(socket, answer(status, text, limits.retryAfterS), LINGER_MS);
  };

  server.on('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '';
    const mine = perAddress.get(addr) ?? 0;
    if (open >= limits.maxConnections) return refuse(socket, RqError.of('RQ_ERR_TOO_MANY_CONNECTIONS', open));
    if (mine >= limits.maxPerAddress) return refuse(socket, RqError.of('RQ_ERR_TOO_MANY_FROM_ADDRESS', mine, addr));
    open++;
    perAddress.set(addr, mine + 1);
    socket.once('close', () => {
      open--;
      const n = (perAddress.get(addr) ?? 1) - 1;
      if (n > 0) perAddress.set(addr, n);
      else perAddress.delete(addr);
    });
    for (const l of node) l.call(server, socket);
  });
  return { open: () => open, refused: () => refused };
}
