// A few pipelined, self-reconnecting connections per queue socket, shared by every request of the web process.
import { RqError, shown } from '../errors.js';
import { QueueClient } from '../ipc/queue-client.js';
import { CODES_HELLO } from '../ipc/reply-codes.js';
import { SocketConnection, mayHaveArrived } from '../ipc/socket-client.js';

/** Commands that change nothing: safe to send again when a connection dropped under them. */
// `metrics`: a scrape every 30 s meets the queue's 30 s idle close; a lost race must not read as the queue down.
const READ_ONLY = new Set([
  'ping',
  'uptime',
  'config',
  'status',
  'num_messages',
  'messages',
  'get_message',
  'get_message_state',
  'get_message_status',
  'stats',
  'failed',
  'metrics',
]);

/**
 * A queue answers the requests of one connection one after another, so concurrent creates on a
 * single connection never share the `que/` fsync; this many connections let them (16 clients:
 * 1 connection ≈ the sequential rate, 16 ≈ 1.9× that, bench/web-enqueue.ts).
 */
const DEFAULT_MAX_CONNS = 16;

export interface QueueClientsOptions {
  /** Socket path of a (validated) queue name. */
  sockPath: (queue: string) => string;
  timeoutMs?: number;
  /** Connections per queue at most. */
  maxConns?: number;
}

interface PoolEntry {
  opening: Promise<SocketConnection>;
  conn: SocketConnection | null;
}

export class QueueClients {
  private readonly pools = new Map<string, PoolEntry[]>();
  private readonly timeoutMs: number;
  private readonly maxConns: number;

  constructor(private readonly opts: QueueClientsOptions) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.maxConns = Math.max(1, opts.maxConns ?? DEFAULT_MAX_CONNS);
  }

  /**
   * Sends one command and returns the parsed reply. Throws RQ_ERR_NO_REPLY when the queue
   * process does not answer (not running, or died mid-request).
   */
  async call(queue: string, command: string, arg: unknown = {}): Promise<unknown> {
    const payload = `${command} ${JSON.stringify(arg)}`;
    let text: string;
    try {
      text = await (await this.conn(queue)).request(payload);
    } catch (err) {
      // The queue closes idle connections; a read caught in that moment is simply asked again, and
      // so is a create with an idempotency key (asked twice, it still makes one message).
      const retrySafe =
        READ_ONLY.has(command) || (typeof arg === 'object' && arg !== null && typeof (arg as { idempotency_key?: unknown }).idempotency_key === 'string');
      if (!retrySafe || !(err instanceof RqError) || err.code !== 'RQ_ERR_NO_REPLY') throw err;
      try {
        text = await (await this.conn(queue)).request(payload);
      } catch (again) {
        // The first attempt may have reached the queue: a retry that cannot connect must not say it did not.
        throw mayHaveArrived(err) && !mayHaveArrived(again) ? err : again;
      }
    }
    try {
      return JSON.parse(text);
    } catch {
      throw RqError.of('RQ_ERR_PROTOCOL', `reply from queue ${queue} to ${command} is not JSON: ${shown(text)}`);
    }
  }

  /** An idle connection if there is one, else a new one while under the cap, else the least busy. */
  private conn(queue: string): Promise<SocketConnection> {
    let pool = this.pools.get(queue);
    if (!pool) {
      pool = [];
      this.pools.set(queue, pool);
    }
    let leastBusy: SocketConnection | null = null;
    for (const e of pool) {
      if (!e.conn) continue;
      if (e.conn.inFlight() === 0) return Promise.resolve(e.conn);
      if (!leastBusy || e.conn.inFlight() < leastBusy.inFlight()) leastBusy = e.conn;
    }
    if (pool.length < this.maxConns) return this.open(queue, pool);
    return leastBusy ? Promise.resolve(leastBusy) : pool[0].opening;
  }

  private open(queue: string, pool: PoolEntry[]): Promise<SocketConnection> {
    const entry: PoolEntry = {
      opening: SocketConnection.open(this.opts.sockPath(queue), 'rq1', { timeoutMs: this.timeoutMs, hello: CODES_HELLO }),
      conn: null,
    };
    pool.push(entry);
    entry.opening.then(
      (c) => (entry.conn = c),
      // A failed open is not remembered: the next request tries again (the queue may be starting).
      () => {
        const i = pool.indexOf(entry);
        if (i >= 0) pool.splice(i, 1);
      },
    );
    return entry.opening;
  }

  /** The typed client of one queue over this pool. */
  client(queue: string): QueueClient {
    return new QueueClient((command, arg) => this.call(queue, command, arg));
  }

  close(): void {
    for (const pool of this.pools.values())
      for (const e of pool)
        e.opening.then(
          (c) => c.close(),
          () => undefined,
        );
    this.pools.clear();
  }
}
