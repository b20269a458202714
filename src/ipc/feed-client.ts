// Client of a queue's event feed (queues/<q>/events.sock): connects, reads the hello, then hands over each event parsed, and says when the connection ends.
import net from 'node:net';
import { RqError } from '../errors.js';
import { type FeedEvent, type FeedHello, parseFeedLine } from './feed-event.js';
import { socketPathRefusal } from './socket-path.js';

export interface FeedHandlers {
  /** Each event, in the order the queue numbered them. */
  event: (ev: FeedEvent) => void;
  /** The connection ended other than by close(): the queue stopped, dropped this reader, or sent a bad line. */
  closed: (why: string) => void;
}

/** A longer line is not a feed line: the connection is dropped rather than buffered. */
const MAX_LINE_CHARS = 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 5000;

function noFeed(path: string, why: string, cause?: unknown): RqError {
  return RqError.of('RQ_ERR_NO_REPLY', `no event feed at ${path}: ${why}`).causedBy(cause);
}

export class FeedClient {
  private ended = false;

  private constructor(private readonly socket: net.Socket) {}

  /** Resolves once the hello has arrived: every event after it reaches `handlers`. Rejects with RQ_ERR_NO_REPLY when no feed answers. */
  static open(path: string, handlers: FeedHandlers, opts: { timeoutMs?: number } = {}): Promise<{ client: FeedClient; hello: FeedHello }> {
    // Cut short, the path could name another queue's feed: its events would pass for this queue's.
    const refusal = socketPathRefusal(path);
    if (refusal) return Promise.reject(refusal);
    const socket = net.createConnection(path);
    socket.setEncoding('utf8');
    const client = new FeedClient(socket);
    return new Promise((resolve, reject) => {
      let hello: FeedHello | null = null;
      let buf = '';
      // Events that come with the hello wait until the opener has taken it (its await resumes first).
      let held: Parameters<FeedHandlers['event']>[0][] | null = null;
      const fail = (why: string, cause?: unknown) => {
        if (client.ended) return;
        const pending = held ?? [];
        held = null;
        client.ended = true;
        clearTimeout(timer);
        socket.destroy();
        if (!hello) return reject(noFeed(path, why, cause));
        // What arrived before the end is still told, then the end.
        for (const ev of pending) handlers.event(ev);
        handlers.closed(why);
      };
      const timer = setTimeout(() => fail(`no hello within ${opts.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms`), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
      const release = () => {
        const events = held ?? [];
        held = null;
        try {
          for (const ev of events) if (!client.ended) handlers.event(ev);
        } catch (err) {
          fail(`event handler failed: ${(err as Error).message}`, err);
        }
      };
      const take = (line: string) => {
        const parsed = parseFeedLine(line);
        if (!hello) {
          if (parsed.type !== 'hello') throw RqError.of('RQ_ERR_PROTOCOL', `event feed began with ${parsed.type}, not hello`);
          hello = parsed;
          clearTimeout(timer);
          held = [];
          resolve({ client, hello });
          setImmediate(release);
        } else if (parsed.type === 'hello') throw RqError.of('RQ_ERR_PROTOCOL', 'event feed sent a second hello');
        else if (held) held.push(parsed);
        else handlers.event(parsed);
      };
      socket.on('data', (chunk: string) => {
        buf += chunk;
        let start = 0;
        try {
          for (let nl = buf.indexOf('\n'); nl >= 0 && !client.ended; nl = buf.indexOf('\n', start)) {
            take(buf.slice(start, nl));
            start = nl + 1;
          }
        } catch (err) {
          const what = err instanceof RqError && err.code === 'RQ_ERR_PROTOCOL' ? 'protocol error' : 'event handler failed';
          return fail(`${what}: ${(err as Error).message}`, err);
        }
        buf = buf.slice(start);
        if (buf.length > MAX_LINE_CHARS) fail(`protocol error: a line longer than ${MAX_LINE_CHARS} characters`);
      });
      socket.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message, err));
      socket.on('close', () => fail(hello ? 'the queue closed the feed' : 'closed before the hello'));
    });
  }

  /** Ends the connection; `closed` is not called for it. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.destroy();
  }
}
