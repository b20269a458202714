// The web's side of the live event stream: one feed connection per queue shared by every /events listener, opened with its first and closed with its last.
import type { Logger } from 'pino';
import type { FeedEvent } from '../ipc/feed-event.js';
import { type FeedState, QueueFeed } from '../ipc/queue-feed.js';

export interface Listener {
  /** null: every queue, as the dashboard finds them, queues added later included. */
  queues: readonly string[] | null;
  event(ev: FeedEvent): void;
  /** `queue`'s events may have been missed, or the queue came or went: look again. */
  gap(queue: string, reason: string): void;
  /** The hub is closing (web shutdown). */
  end(reason: string): void;
}

export interface Subscription {
  /** Each queue's feed state once its first connection attempt is over; events may arrive before. */
  ready: Promise<Record<string, FeedState>>;
  remove(): void;
}

export interface EventHubDeps {
  /** events.sock of a queue. */
  feedPath: (queue: string) => string;
  /** Every queue, the way the dashboard lists them. */
  listQueues: () => Promise<string[]>;
  log: Logger;
  /** Listeners at once; past it add() answers null. */
  maxListeners: number;
  /** How often the queue list is read again while someone listens to every queue. */
  discoverMs?: number;
  retryMs?: { min: number; max: number };
}

const DISCOVER_MS = 5000;
/** Streams at once when config.json has no max_event_streams. */
export const DEFAULT_MAX_EVENT_STREAMS = 64;

interface Entry {
  feed: QueueFeed;
  listeners: Set<Listener>;
}

export class EventHub {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<Listener>();
  /** Listeners of every queue, and the queues they follow now. */
  private readonly everywhere = new Set<Listener>();
  private known: string[] | null = null;
  private discovery: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(private readonly d: EventHubDeps) {}

  /** How many listeners are attached. */
  size(): number {
    return this.listeners.size;
  }

  /** Attaches a listener, or answers null when `maxListeners` are attached already (or the hub is closed). */
  add(l: Listener): Subscription | null {
    if (this.closed || this.listeners.size >= this.d.maxListeners) return null;
    this.listeners.add(l);
    const ready = (async () => {
      let queues = l.queues;
      if (queues === null) {
        this.everywhere.add(l);
        this.startDiscovery();
        queues = this.known ?? (this.known = await this.d.listQueues());
      }
      // Gone meanwhile (the client left while the list was read).
      if (!this.listeners.has(l)) return {};
      for (const q of queues) this.attach(q, l);
      await Promise.all(queues.map((q) => this.entries.get(q)?.feed.first));
      return Object.fromEntries(queues.map((q) => [q, this.entries.get(q)?.feed.state() ?? { up: false as const, error: 'not followed' }]));
    })();
    return { ready, remove: () => this.remove(l) };
  }

  /** Ends every listener and every feed. */
  close(): void {
    this.closed = true;
    for (const l of [...this.listeners]) {
      this.remove(l);
      l.end('the web process is stopping');
    }
  }

  private remove(l: Listener): void {
    if (!this.listeners.delete(l)) return;
    this.everywhere.delete(l);
    for (const q of [...this.entries.keys()]) this.detach(q, l);
    if (this.everywhere.size === 0) this.stopDiscovery();
  }

  private attach(queue: string, l: Listener): void {
    let e = this.entries.get(queue);
    if (!e) {
      const listeners = new Set<Listener>();
      const feed = new QueueFeed({
        queue,
        path: this.d.feedPath(queue),
        log: this.d.log,
        retryMs: this.d.retryMs,
        event: (ev) => {
          for (const x of listeners) x.event(ev);
        },
        gap: (reason) => {
          for (const x of listeners) x.gap(queue, reason);
        },
      });
      e = { feed, listeners };
      this.entries.set(queue, e);
    }
    e.listeners.add(l);
  }

  private detach(queue: string, l: Listener): void {
    const e = this.entries.get(queue);
    if (!e?.listeners.delete(l) || e.listeners.size > 0) return;
    e.feed.close();
    this.entries.delete(queue);
  }

  private startDiscovery(): void {
    if (this.discovery) return;
    this.discovery = setInterval(() => void this.discover(), this.d.discoverMs ?? DISCOVER_MS);
    this.discovery.unref();
  }

  private stopDiscovery(): void {
    if (this.discovery) clearInterval(this.discovery);
    this.discovery = null;
    this.known = null;
  }

  /** Follows queues added since the last look, lets go of those removed, and tells the listeners of every queue. */
  private async discover(): Promise<void> {
    let now: string[];
    try {
      now = await this.d.listQueues();
    } catch (err) {
      this.d.log.warn({ err: (err as Error).message }, 'event hub: queue list not read');
      return;
    }
    const before = this.known;
    if (!before || this.everywhere.size === 0) return;
    this.known = now;
    for (const q of now.filter((n) => !before.includes(n))) {
      for (const l of this.everywhere) {
        this.attach(q, l);
        l.gap(q, `queue ${q} was added`);
      }
    }
    for (const q of before.filter((n) => !now.includes(n))) {
      for (const l of this.everywhere) {
        this.detach(q, l);
        l.gap(q, `queue ${q} was removed`);
      }
    }
  }
}
