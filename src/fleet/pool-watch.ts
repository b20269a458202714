// Which pools have a host that takes their work, from each change of the fleet view: a queue that had none and now has one is announced, so messages waiting for it go at once (docs/fleet.md, Pools).
import { type FleetHost, takesWork } from '../ipc/fleet-reply.js';

export class PoolWatch {
  /** Queues some host took work for at the last change. */
  private open = new Set<string>();

  constructor(private readonly opened: (queue: string) => void) {}

  /** The hosts as they are now; `opened` is called for each queue that had no host taking its work before. */
  changed(hosts: readonly FleetHost[]): void {
    const now = new Set<string>();
    for (const h of hosts) for (const q of Object.keys(h.queues)) if (takesWork(h, q)) now.add(q);
    const before = this.open;
    this.open = now;
    for (const q of now) if (!before.has(q)) this.opened(q);
  }
}
