// This host's queues as the fleet sees them (status, ready, running, workers): read from each queue when its event feed says something changed, never on a timer.
import type { Logger } from 'pino';
import { queuePaths } from '../config/paths.js';
import type { FeedEvent } from '../ipc/feed-event.js';
import type { QueueFigures } from '../ipc/fleet-reply.js';
import { QueueClient } from '../ipc/queue-client.js';
import { QueueFeed } from '../ipc/queue-feed.js';

export interface LocalQueuesDeps {
  root: string;
  log: Logger;
  /** Some queue's figures changed. */
  changed: () => void;
  /** A burst of events in one queue is read once per this many ms at most. */
  settleMs?: number;
}

/** A queue that does not answer: what the classic status pages call it. */
const NOT_ANSWERING: QueueFigures = { status: 'DOWN', ready: 0, running: 0, workers: 0 };
const SETTLE_MS = 100;
/** Events that change no figure: a running script's status text. */
const IGNORED = new Set<FeedEvent['type']>(['progress']);

interface Watched {
  feed: QueueFeed;
  figures: QueueFigures | null;
  timer: NodeJS.Timeout | null;
  reading: boolean;
  again: boolean;
}

export class LocalQueues {
  private readonly queues = new Map<string, Watched>();
  private closed = false;
  /** This host's web serves: the others reach its queues only through it (its advertise URL). */
  private webServes = false;

  constructor(private readonly d: LocalQueuesDeps) {}

  /** The queues that serve now: feeds open for new ones, close for those gone. */
  set(names: readonly string[]): void {
    if (this.closed) return;
    const wanted = new Set(names);
    let changed = false;
    for (const [name, w] of this.queues) {
      if (wanted.has(name)) continue;
      this.drop(w);
      this.queues.delete(name);
      changed = true;
    }
    for (const name of wanted) {
      if (this.queues.has(name)) continue;
      this.watch(name);
      changed = true;
    }
    if (changed) this.d.changed();
  }

  /**
   * Whether this host's web serves. Until it does (starting, restarting, its port held), every queue reads
   * DOWN: a pool host chosen, or a pool woken, for a queue UP behind a web that refuses would spend an
   * attempt and wait out a back-off.
   */
  web(serves: boolean): void {
    if (this.closed || this.webServes === serves) return;
    this.webServes = serves;
    if (this.queues.size > 0) this.d.changed();
  }

  /** Each queue's last figures; one not read yet counts as not answering, every one while the web does not serve. */
  figures(): Record<string, QueueFigures> {
    const out: Record<string, QueueFigures> = {};
    for (const name of [...this.queues.keys()].sort()) {
      const f = this.queues.get(name)!.figures ?? NOT_ANSWERING;
      out[name] = this.webServes ? f : { ...f, status: 'DOWN' };
    }
    return out;
  }

  close(): void {
    this.closed = true;
    for (const w of this.queues.values()) this.drop(w);
    this.queues.clear();
  }

  private watch(name: string): void {
    const soon = () => this.soon(name);
    const feed = new QueueFeed({
      queue: name,
      path: queuePaths(this.d.root, name).eventsSock,
      log: this.d.log,
      event: (ev) => (IGNORED.has(ev.type) ? undefined : soon()),
      // Reconnected or lost: whatever happened in between is read afresh.
      gap: soon,
      justStarted: true,
    });
    this.queues.set(name, { feed, figures: null, timer: null, reading: false, again: false });
    void feed.first.then(soon);
  }

  private drop(w: Watched): void {
    w.feed.close();
    if (w.timer) clearTimeout(w.timer);
    w.timer = null;
  }

  /** One read per settle period however many events came; a change during a read is read again after it. */
  private soon(name: string): void {
    const w = this.queues.get(name);
    if (!w || w.timer) return;
    if (w.reading) {
      w.again = true;
      return;
    }
    w.timer = setTimeout(() => void this.read(name, w), this.d.settleMs ?? SETTLE_MS);
  }

  private async read(name: string, w: Watched): Promise<void> {
    w.timer = null;
    w.reading = true;
    const next = await figuresOf(this.d.root, name);
    w.reading = false;
    if (this.queues.get(name) !== w) return;
    const before = JSON.stringify(w.figures);
    w.figures = next;
    if (JSON.stringify(next) !== before) this.d.changed();
    if (w.again) {
      w.again = false;
      this.soon(name);
    }
  }
}

/** One `metrics` call: the queue's status, ready and running counts, and worker slots. */
async function figuresOf(root: string, name: string): Promise<QueueFigures> {
  try {
    const a = await QueueClient.oneShot(queuePaths(root, name).sock, { timeoutMs: 5000 }).metrics();
    if (!a.ok) return NOT_ANSWERING;
    const m = a.value;
    return { status: m.status, ready: m.live.que.ready, running: m.live.counts.run, workers: m.workers };
  } catch {
    return NOT_ANSWERING;
  }
}
