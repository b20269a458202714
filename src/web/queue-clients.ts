// One pipelined, self-reconnecting connection per queue socket, shared by every request of the web process.
import { RqError, shown } from '../errors.js';
import { SocketConnection } from '../ipc/socket-client.js';

/** Commands that change nothing: safe to send again when a connection dropped under them. */
const READ_ONLY = new Set(['ping', 'uptime', 'config', 'status', 'num_messages', 'messages', 'get_message', 'get_message_state', 'get_message_status']);

export interface QueueClientsOptions {
  /** Socket path of a (validated) queue name. */
  sockPath: (queue: string) => string;
  timeoutMs?: number;
}

export class QueueClients {
  private readonly conns = new Map<string, Promise<SocketConnection>>();
  private readonly timeoutMs: number;

  constructor(private readonly opts: QueueClientsOptions) {
    this.timeoutMs = opts.timeoutMs ?? 10_000;
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
      // The queue closes idle connections; a read caught in that moment is simply asked again.
      if (!READ_ONLY.has(command) || !(err instanceof RqError) || err.code !== 'RQ_ERR_NO_REPLY') throw err;
      text = await (await this.conn(queue)).request(payload);
    }
    try {
      return JSON.parse(text);
    } catch {
      throw new RqError('RQ_ERR_PROTOCOL', `reply from queue ${queue} to ${command} is not JSON: ${shown(text)}`);
    }
  }

  private conn(queue: string): Promise<SocketConnection> {
    let p = this.conns.get(queue);
    if (!p) {
      p = SocketConnection.open(this.opts.sockPath(queue), 'rq1', { timeoutMs: this.timeoutMs });
      this.conns.set(queue, p);
      // A failed open is not remembered: the next request tries again (the queue may be starting).
      p.catch(() => {
        if (this.conns.get(queue) === p) this.conns.delete(queue);
      });
    }
    return p;
  }

  close(): void {
    for (const p of this.conns.values()) p.then((c) => c.close(), () => undefined);
    this.conns.clear();
  }
}
