// Unix socket client for the rq1/rq2 framings: one-shot requests and a pipelined long-lived connection.
import net from 'node:net';
import { RqError } from '../errors.js';
import { FrameDecoder, FrameError, MAX_FRAME_BYTES, encodeFrame, type Proto } from './framing.js';
import { socketPathRefusal } from './socket-path.js';

export interface RequestOptions {
  /** Give up when no reply has arrived this long after the request was made (default 10 s). */
  timeoutMs?: number;
  /** A request sent first on every new connection, its reply dropped: how a client tells the server what it understands (CODES_HELLO). */
  hello?: string;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Why a connect failed, in words an operator can act on. */
function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case 'ENOENT':
      return 'ENOENT: no socket file (is the process running?)';
    case 'ECONNREFUSED':
      return 'ECONNREFUSED: nothing is listening (the process may have died)';
    case 'EACCES':
      return 'EACCES: permission denied (the socket is private to its owner)';
    default:
      return e instanceof Error ? e.message : String(err);
  }
}

/** `reached` false: the request never left (no connection), so the server did nothing with it. */
function noReply(path: string, cause: string, err?: unknown, reached = true): RqError {
  const e = RqError.of('RQ_ERR_NO_REPLY', `no reply from ${path}: ${cause}`).causedBy(err);
  Object.defineProperty(e, 'reached', { value: reached, enumerable: false });
  return e;
}

/**
 * Could the server have acted on a request that got no reply? False only when it never got it (no
 * connection): then a retry cannot duplicate anything; otherwise only an idempotency key makes it safe.
 */
export function mayHaveArrived(err: unknown): boolean {
  return (err as { reached?: boolean }).reached !== false;
}

/** Replies come from our own daemons, so accept anything the 8-digit length can carry. */
function replyDecoder(proto: Proto): FrameDecoder {
  return new FrameDecoder(proto, MAX_FRAME_BYTES);
}

function badReply(path: string, err: FrameError): RqError {
  return RqError.of('RQ_ERR_PROTOCOL', `bad reply from ${path}: ${err.message}`).causedBy(err);
}

/** Connect, send one request frame, read exactly one reply frame, close. */
export function request(path: string, proto: Proto, payload: string, opts: RequestOptions = {}): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const frame = opts.hello === undefined ? encodeFrame(proto, payload) : Buffer.concat([encodeFrame(proto, opts.hello), encodeFrame(proto, payload)]);
  // The hello's reply comes first and is dropped; kept if it refuses (refusesConnection), for a close that follows.
  let unread = opts.hello === undefined ? 0 : 1;
  let helloRefused: string | null = null;
  // Connected cut short, the request would go to whichever socket the shorter path names.
  const refusal = socketPathRefusal(path);
  if (refusal) return Promise.reject(refusal);
  return new Promise((resolve, reject) => {
    const decoder = replyDecoder(proto);
    let connected = false;
    let settled = false;
    const settle = (err: Error | null, reply?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    // Before the connect, the frame is still in node's buffer: the request never left.
    const timer = setTimeout(() => settle(noReply(path, `timed out after ${timeoutMs} ms${connected ? '' : ' connecting'}`, undefined, connected)), timeoutMs);
    const socket = net.createConnection(path);
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (chunk: Buffer) => {
      try {
        for (const reply of decoder.push(chunk)) {
          const text = reply.toString('utf8');
          if (unread-- > 0) {
            if (refusesConnection(text)) helloRefused = text;
            continue;
          }
          settle(null, text);
        }
      } catch (err) {
        settle(err instanceof FrameError ? badReply(path, err) : (err as Error));
      }
    });
    socket.on('error', (err) => settle(noReply(path, connected ? `connection failed: ${err.message}` : describe(err), err, connected)));
    // A hello refused and then the connection closed: the server refused the connection (too many open), which is the request's answer.
    socket.on('close', () => (helloRefused === null ? settle(noReply(path, 'connection closed before a whole reply arrived')) : settle(null, helloRefused)));
    socket.write(frame);
  });
}

/**
 * Whether a hello's reply may be the server's refusal of the connection (`["fail", …]` to rq1, `["error", …]` to rq2:
 * too many open, answered before any request is read, then closed) rather than the hello's own answer (`["ok", …]`,
 * `["ERROR", …]` from a server that does not know it); a server that refused only the hello answers the request too.
 */
function refusesConnection(reply: string): boolean {
  try {
    const v: unknown = JSON.parse(reply);
    return Array.isArray(v) && (v[0] === 'fail' || v[0] === 'error');
  } catch {
    return false;
  }
}

interface Pending {
  resolve: (reply: string) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One connection carrying many requests, answered first in, first out (the server answers each
 * connection in order). When the connection breaks every pending request fails; the next request
 * connects afresh, so a restarted server is picked up without the caller noticing.
 */
export class SocketConnection {
  private socket: net.Socket | null = null;
  private decoder: FrameDecoder;
  private pending: Pending[] = [];
  private closed = false;

  private constructor(
    readonly path: string,
    readonly proto: Proto,
    private readonly timeoutMs: number,
    private readonly hello?: string,
  ) {
    this.decoder = replyDecoder(proto);
  }

  /** Connects now, so a missing server is reported at open rather than at the first request. */
  static async open(path: string, proto: Proto, opts: RequestOptions = {}): Promise<SocketConnection> {
    // Its path never changes, so a connection that opened may connect again (request()) unchecked.
    const refusal = socketPathRefusal(path);
    if (refusal) throw refusal;
    const conn = new SocketConnection(path, proto, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, opts.hello);
    const socket = conn.connect();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(noReply(path, `timed out after ${conn.timeoutMs} ms connecting`, undefined, false));
      }, conn.timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve();
      });
      const onError = (err: Error) => {
        clearTimeout(timer);
        reject(noReply(path, describe(err), err, false));
      };
      socket.once('error', onError);
    });
    return conn;
  }

  request(payload: string): Promise<string> {
    if (this.closed) return Promise.reject(noReply(this.path, 'connection was closed by its owner'));
    let frame: Buffer;
    try {
      frame = encodeFrame(this.proto, payload);
    } catch (err) {
      return Promise.reject(err);
    }
    const socket = this.socket ?? this.connect();
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        resolve,
        reject,
        timer: setTimeout(() => {
          // The reply may still come and would then be taken for the next request's: drop the connection.
          this.fail(socket, noReply(this.path, 'connection dropped: another request on it timed out'), {
            entry,
            err: noReply(this.path, `timed out after ${this.timeoutMs} ms`),
          });
        }, this.timeoutMs),
      };
      this.pending.push(entry);
      socket.write(frame);
    });
  }

  /** Requests sent and not yet answered. */
  inFlight(): number {
    return this.pending.length;
  }

  /** Closes the connection; requests not yet answered fail. */
  close(): void {
    this.closed = true;
    if (this.socket) this.fail(this.socket, noReply(this.path, 'connection was closed by its owner'));
  }

  private connect(): net.Socket {
    const socket = net.createConnection(this.path);
    this.socket = socket;
    this.decoder = replyDecoder(this.proto);
    let connected = false;
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (chunk: Buffer) => {
      if (socket !== this.socket) return;
      let replies: Buffer[];
      try {
        replies = this.decoder.push(chunk);
      } catch (err) {
        this.fail(socket, err instanceof FrameError ? badReply(this.path, err) : (err as Error));
        return;
      }
      for (const reply of replies) {
        const p = this.pending.shift();
        if (!p) {
          this.fail(socket, RqError.of('RQ_ERR_PROTOCOL', `bad reply from ${this.path}: a reply arrived with no request waiting`));
          return;
        }
        clearTimeout(p.timer);
        p.resolve(reply.toString('utf8'));
      }
    });
    socket.on('error', (err) => {
      this.fail(socket, connected ? noReply(this.path, `connection failed: ${err.message}`, err) : noReply(this.path, describe(err), err, false));
    });
    let helloRefused: string | null = null;
    socket.on('close', () => {
      if (helloRefused !== null) this.refuseAll(socket, helloRefused);
      else this.fail(socket, noReply(this.path, 'connection closed before a whole reply arrived'));
    });
    if (this.hello !== undefined) {
      const dropped: Pending = {
        // A refusal in the hello's place, the connection then closed (refusesConnection): what every request behind it hears.
        resolve: (reply) => {
          if (refusesConnection(reply)) helloRefused = reply;
        },
        reject: () => undefined,
        timer: setTimeout(() => this.fail(socket, noReply(this.path, `timed out after ${this.timeoutMs} ms`)), this.timeoutMs),
      };
      this.pending.push(dropped);
      socket.write(encodeFrame(this.proto, this.hello));
    }
    return socket;
  }

  /** Drops a connection the server refused, answering every request waiting on it with the server's refusal. */
  private refuseAll(socket: net.Socket, reply: string): void {
    this.drop(socket, (p) => p.resolve(reply));
  }

  /** Drops a broken connection and fails every request waiting on it (`culprit`, if given, with its own error). */
  private fail(socket: net.Socket, err: Error, culprit?: { entry: Pending; err: Error }): void {
    this.drop(socket, (p) => p.reject(p === culprit?.entry ? culprit.err : err));
  }

  /** Lets go of `socket`, if it is still the connection, and settles each request that waited on it. */
  private drop(socket: net.Socket, settle: (p: Pending) => void): void {
    if (socket !== this.socket) return;
    this.socket = null;
    socket.destroy();
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) {
      clearTimeout(p.timer);
      settle(p);
    }
  }
}
