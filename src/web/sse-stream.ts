// One Server-Sent Events response: headers, keep-alive comments, writes batched per tick and bounded in memory, a clean end.
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';

export interface SseOptions {
  /** Proxies close idle streams: a comment line this often keeps one open. */
  keepAliveMs: number;
  /** Bytes the client may leave unread before the stream is cut (it reconnects, and is told it missed events). */
  maxPendingBytes: number;
  /** How long an EventSource waits before it reconnects (the `retry:` field). */
  retryMs: number;
  log: Logger;
  /** The stream is over, whoever ended it. */
  onClose: () => void;
}

export class SseStream {
  private batch: string[] = [];
  private scheduled = false;
  private closed = false;
  private readonly keepAlive: NodeJS.Timeout;

  /** Takes the response over from fastify and sends the headers: fastify's own (security headers) and the stream's. */
  constructor(
    private readonly reply: FastifyReply,
    private readonly opts: SseOptions,
  ) {
    reply.hijack();
    const res = reply.raw;
    const inherited: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) inherited[k] = v;
    res.writeHead(200, {
      ...inherited,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
      // The stream holds the connection for its whole life; when it ends (a shutdown, say) the connection goes too, not to idle on.
      Connection: 'close',
    });
    res.on('close', () => this.closeNow());
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), opts.keepAliveMs);
    this.write(`retry: ${opts.retryMs}\n\n`);
  }

  get open(): boolean {
    return !this.closed;
  }

  /** One event; `data` goes out as one line of JSON. */
  send(event: string | null, data: unknown, id?: string): void {
    this.write(`${id === undefined ? '' : `id: ${id}\n`}${event === null ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends a last event, then ends the response. */
  end(event: string, data: unknown): void {
    if (this.closed) return;
    this.send(event, data);
    this.flush();
    this.closeNow();
    this.reply.raw.end();
  }

  private write(text: string): void {
    if (this.closed) return;
    this.batch.push(text);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed || this.batch.length === 0) return;
    const text = this.batch.join('');
    this.batch = [];
    const res = this.reply.raw;
    if (res.writableLength + Buffer.byteLength(text) > this.opts.maxPendingBytes) {
      this.opts.log.warn({ pending: res.writableLength }, 'event stream client fell behind; closing its stream');
      this.closeNow();
      res.destroy();
      return;
    }
    res.write(text);
  }

  private closeNow(): void {
    if (this.closed) return;
    this.closed = true;
    this.batch = [];
    clearInterval(this.keepAlive);
    this.opts.onClose();
  }
}
