// Which pools have a host that takes their work, from the changes of the fleet view: a queue that had none and now has one is announced, so messages waiting for it go at once (docs/fleet.md, Pools).
import { type FleetHost, takesWork } from '../ipc/fleet-reply.js';

/** How long a change of the fleet waits for the ones after it before the pools are looked at: hosts put their records up to 5 times a second each. */
const LOOK_AFTER_MS = 100;

export class PoolWatch {
  /** Queues some host took work for at the last look. */
  private open = new Set<string>();
  private pending: NodeJS.Timeout | null = null;

  constructor(
    /** The hosts as the fleet view has them now. */
    private readonly hosts: () => readonly FleetHost[],
    private readonly announce: (queue: string) => void,
  ) {}

  /** Queues some host takes work for now. */
  get opened(): ReadonlySet<string> {
    return this.open;
  }

  /** The view changed: the pools are looked at once this burst of changes is over. */
  changed(): void {
    this.pending ??= setTimeout(() => {
      this.pending = null;
      this.look();
    }, LOOK_AFTER_MS);
  }

  /** Announces each queue that had no host taking its work at the last look and has one now. */
  look(): void {
    const now = new Set<string>();
    for (const h of this.hosts()) for (const q of Object.keys(h.queues)) if (takesWork(h, q)) now.add(q);
    const before = this.open;
    this.open = now;
    for (const q of now) if (!before.has(q)) this.announce(q);
  }

  close(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = null;
  }
}
