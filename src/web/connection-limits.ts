// Bounds the web's open connections in total and per client, fairly: a new connection past a bound takes the place of an idle one (connection-table.ts), and is answered 503 or 429 with Retry-After on the raw socket only when none may be taken.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import { refuseSocket } from '../ipc/refuse-socket.js';
import type { WebLimits } from '../config/web-limits.js';
import { type Cap, ConnectionTable } from './connection-table.js';
import { peerKey } from './peer-key.js';
import { SlowClose } from './slow-close.js';
import { turnAwayLog } from './turn-away-log.js';

/** How long a refused socket may take to read its answer before it is cut. */
const LINGER_MS = 2000;
/** Refusals and evictions are logged at most once in this long, with counts (turn-away-log.ts). */
const LOG_EVERY_MS = 10_000;
/** How long an evicted connection that never sent a request is held, paused, before it is closed (slow-close.ts). */
const SLOW_CLOSE_MS = 2000;

export interface ConnectionCounts {
  open(): number;
  refused(): number;
  evicted(): number;
}

function answer(status: 503 | 429, text: string, retryAfterS: number): string {
  const body = `${text}\n`;
  const reason = status === 503 ? 'Service Unavailable' : 'Too Many Requests';
  return `HTTP/1.1 ${status} ${reason}\r\nRetry-After: ${retryAfterS}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

function refusal(cap: Cap, held: number, peer: string): RqError {
  return cap === 'total' ? RqError.of('RQ_ERR_TOO_MANY_CONNECTIONS', held) : RqError.of('RQ_ERR_TOO_MANY_FROM_ADDRESS', held, peer);
}

/**
 * Node's `maxConnections` drops the socket without a word and keeps whoever came first, so node's
 * own connection listener is wrapped instead. A connection is counted from its accept; node's
 * 'request' event and the response's 'close' tell busy from idle. An evicted connection is closed
 * without an answer, as node's own keep-alive timeout closes one: it had no request in flight, so
 * nothing is lost (one that never sent a request a while later, by SlowClose; `slowCloseMs` is for
 * tests). A refused one never reaches the HTTP parser: it gets its answer at once (refuseSocket),
 * and no request was read, so none is lost either.
 */
export function limitConnections(server: Server, limits: WebLimits, log: Logger, slowCloseMs = SLOW_CLOSE_MS): ConnectionCounts {
  const node = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const table = new ConnectionTable<Socket>(limits.maxConnections, limits.maxPerAddress);
  const turnedAway = turnAwayLog(log, LOG_EVERY_MS);
  const slowClose = new SlowClose(slowCloseMs, limits.maxConnections);
  let refused = 0;
  let evicted = 0;

  server.on('connection', (socket: Socket) => {
    const peer = peerKey(socket.remoteAddress);
    const decision = table.admit(peer);
    if (decision.kind === 'refuse') {
      const err = refusal(decision.cap, decision.held, peer);
      refused++;
      turnedAway.note('refused', { status: err.status, peer, cap: decision.cap, open: table.size });
      return refuseSocket(socket, answer(err.status as 503 | 429, err.message, limits.retryAfterS), LINGER_MS);
    }
    if (decision.kind === 'evict') {
      evicted++;
      turnedAway.note('evicted', { peer: decision.victimPeer, for_peer: peer, cap: decision.cap, open: table.size });
      // Out of the table before the newcomer goes in: the counts never pass their bounds, even for a moment.
      table.remove(decision.victim);
      // A keep-alive connection between requests is closed at once, so its client knows before it sends the next one.
      if (decision.fresh) slowClose.close(decision.victim);
      else decision.victim.destroy();
    }
    table.add(socket, peer);
    socket.once('close', () => table.remove(socket));
    for (const l of node) l.call(server, socket);
    // Node starts reading the socket now, and the next poll phase reads what the client already sent (its request, if it
    // sent one at once); the second immediate runs after that phase. Only then is a connection with no request half-open.
    setImmediate(() => setImmediate(() => table.settle(socket)));
  });

  // Fires once a request's headers are in; the response's 'close' comes when it is answered or its connection is gone.
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    table.requestStarted(socket);
    res.once('close', () => table.requestEnded(socket));
  });
  server.once('close', () => turnedAway.flush());

  return { open: () => table.size, refused: () => refused, evicted: () => evicted };
}
