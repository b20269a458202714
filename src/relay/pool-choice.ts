// Which host of the fleet takes a pool message: of the hosts whose queue is UP, the one with the most free capacity, ties drawn at random.
import { type FleetView, type QueueFigures, takesWork } from '../ipc/fleet-reply.js';

export interface PoolHost {
  host: string;
  /** The base URL the host advertises (fleet.advertise): where the relay sends. */
  url: string;
  /** workers − running − ready: below zero for a host with a backlog. */
  free: number;
  figures: QueueFigures;
}

/** The hosts that take work for `queue` now (`takesWork`); this host itself is one of them when it runs the queue. */
export function poolHosts(view: FleetView, queue: string): PoolHost[] {
  const out: PoolHost[] = [];
  for (const h of view.hosts) {
    if (!takesWork(h, queue)) continue;
    const f = h.queues[queue];
    out.push({ host: h.host, url: h.url, free: f.workers - f.running - f.ready, figures: f });
  }
  return out;
}

/**
 * The most free capacity wins. Ties are common (every idle host has all its workers free) and
 * drawn at random, so concurrent relay runs that read the same figures spread over the tied hosts
 * instead of all taking the first one; a host with a backlog still takes work when every host has one.
 */
export function choosePoolHost(hosts: readonly PoolHost[], random: () => number = Math.random): PoolHost | null {
  if (hosts.length === 0) return null;
  const best = Math.max(...hosts.map((h) => h.free));
  const top = hosts.filter((h) => h.free === best);
  return top[Math.min(top.length - 1, Math.floor(random() * top.length))];
}
