// One queue's event feed held open: a FeedClient that reconnects while it is wanted, and says when events may have been missed (the web's live events, rq-mgr's fleet figures).
import type { Logger } from 'pino';
import { FeedClient } from './feed-client.js';
import type { FeedEvent } from './feed-event.js';
import { Doubling } from '../backoff.js';

export interface QueueFeedDeps {
  queue: string;
  path: string;
  log: Logger;
  /** Every event, in the queue's order. */
  event: (ev: FeedEvent) => void;
  /** Events may have been missed (the connection dropped, came back, or skipped a number): readers should look again. */
  gap: (reason: string) => void;
  /** First and longest wait between connection attempts (a restarting queue takes a moment to listen again). */
  retryMs?: { min: number; max: number };
  /** The queue has only just said it serves, and binds its feed a moment later: a first refusal is expected, not said. */
  justStarted?: boolean;
}

/** What a new listener is told about the queue: its process and numbering when the feed is up. */
export type FeedState = { up: true; pid: number; seq: number } | { up: false; error: string };

const RETRY = { min: 100, max: 2000 };

export class QueueFeed {
  /** Resolves once the first attempt has connected or failed. */
  readonly first: Promise<void>;
  private client: FeedClient | null = null;
  private current: FeedState = { up: false, error: 'connecting' };
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly waits: Doubling;

  constructor(private readonly d: QueueFeedDeps) {
    const retry = d.retryMs ?? RETRY;
    this.waits = new Doubling({ baseMs: retry.min, maxMs: retry.max });
    this.first = this.connect(false);
  }

  state(): FeedState {
    return this.current;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.client?.close();
    this.client = null;
  }

  private async connect(again: boolean): Promise<void> {
    this.timer = null;
    try {
      const { client, hello } = await FeedClient.open(this.d.path, { event: (ev) => this.onEvent(ev), closed: (why) => this.onClosed(why) });
      if (this.closed) return client.close();
      this.client = client;
      this.current = { up: true, pid: hello.pid, seq: hello.seq };
      this.waits.reset();
      this.d.log.info({ queue: this.d.queue, pid: hello.pid, seq: hello.seq }, 'event feed connected');
      if (again) this.d.gap(`the feed of ${this.d.queue} is back (pid ${hello.pid})`);
    } catch (err) {
      if (this.closed) return;
      const error = (err as Error).message;
      // Said once per outage: the first failure, not every retry.
      const expected = !again && this.d.justStarted === true;
      if (this.current.up || (!again && !expected)) this.d.log.warn({ queue: this.d.queue, err: error }, 'event feed not answering; retrying');
      this.current = { up: false, error };
      this.later();
    }
  }

  private onEvent(ev: FeedEvent): void {
    if (!this.current.up) return;
    const expected = this.current.seq + 1;
    this.current.seq = ev.seq;
    if (ev.seq !== expected) this.d.gap(`the feed of ${this.d.queue} skipped from ${expected - 1} to ${ev.seq}`);
    this.d.event(ev);
  }

  private onClosed(why: string): void {
    this.client = null;
    if (this.closed) return;
    this.d.log.warn({ queue: this.d.queue, why }, 'event feed lost; reconnecting');
    this.current = { up: false, error: why };
    this.d.gap(`the feed of ${this.d.queue} was lost: ${why}`);
    this.later();
  }

  private later(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.connect(true), this.waits.next());
  }
}
