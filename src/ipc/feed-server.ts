// Unix socket server of a push-only feed: no requests, every line to every reader, and a reader that falls behind is dropped.
import net from 'node:net';
import type { Logger } from '../log.js';
import { bindPrivate, removeStale } from './socket-bind.js';

export interface FeedServerOptions {
  path: string;
  log: Logger;
  /** The first line a new reader gets (no newline): it follows every line sent before, and precedes every line sent after. */
  hello: () => string;
  /** Bytes a reader may leave unread before it is dropped (default 4 MiB): the sender never waits and never buffers without bound. */
  maxPendingBytes?: number;
  /** Readers at once (default 64). The socket is private to the queue's user; this only bounds a runaway one. */
  maxReaders?: number;
}

export interface FeedServer {
  readonly path: string;
  /** Queues one line (no newline) for every reader; the lines of one tick go out in one write per reader. */
  send(line: string): void;
  readers(): number;
  /** Stops accepting, hands every reader what it was sent, then ends each connection. */
  close(): Promise<void>;
}

const DEFAULT_MAX_PENDING = 4 * 1024 * 1024;
const DEFAULT_MAX_READERS = 64;
/** How long close() lets a reader take its last lines before the connection is cut. */
const CLOSE_GRACE_MS = 2000;

export async function listenFeed(opts: FeedServerOptions): Promise<FeedServer> {
  const { path, log } = opts;
  const maxPending = opts.maxPendingBytes ?? DEFAULT_MAX_PENDING;
  const maxReaders = opts.maxReaders ?? DEFAULT_MAX_READERS;
  const readers = new Set<net.Socket>();
  let batch: string[] = [];
  let scheduled = false;
  let closing = false;

  const flush = () => {
    scheduled = false;
    if (batch.length === 0) return;
    const text = batch.join('');
    batch = [];
    const bytes = Buffer.byteLength(text);
    for (const s of readers) {
      if (s.writableLength + bytes > maxPending) {
        log.warn({ path, pending: s.writableLength }, 'event feed reader fell behind; dropping it');
        readers.delete(s);
        s.destroy();
        continue;
      }
      s.write(text);
    }
  };

  const serve = (socket: net.Socket): void => {
    if (closing || readers.size >= maxReaders) {
      if (!closing) log.warn({ path, readers: readers.size }, 'event feed refused a reader: too many readers');
      socket.destroy();
      return;
    }
    // Lines already numbered go to the readers that were there: the hello's numbering starts after them.
    flush();
    readers.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', (err) => log.debug({ path, err: err.message }, 'event feed reader error'));
    socket.on('close', () => readers.delete(socket));
    socket.write(`${opts.hello()}\n`);
  };

  await removeStale(path, log);
  const server = net.createServer(serve);
  await bindPrivate(server, path);
  server.on('error', (err) => log.error({ err, path }, 'event feed server error'));

  let closed: Promise<void> | null = null;
  return {
    path,
    readers: () => readers.size,
    send(line) {
      if (closing || readers.size === 0) return;
      batch.push(`${line}\n`);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    close() {
      closed ??= (async () => {
        flush();
        closing = true;
        // server.close resolves once every connection is gone; libuv unlinks the socket file.
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of readers) s.end();
        const grace = setTimeout(() => {
          for (const s of readers) s.destroy();
        }, CLOSE_GRACE_MS);
        await stopped;
        clearTimeout(grace);
      })();
      return closed;
    },
  };
}
