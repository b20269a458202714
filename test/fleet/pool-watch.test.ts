// PoolWatch: from each change of the fleet view, the queues that had no host taking their work and now have one.
import { describe, expect, it, vi } from 'vitest';
import type { FleetHost } from '../../src/ipc/fleet-reply.js';
import { PoolWatch } from '../../src/fleet/pool-watch.js';

const host = (name: string, state: 'up' | 'gone', queues: Record<string, string>): FleetHost => ({
  host: name,
  state,
  url: `http://${name}:3333`,
  since: null,
  queues: Object.fromEntries(Object.entries(queues).map(([q, status]) => [q, { status, ready: 0, running: 0, workers: 1 }])),
});

describe('PoolWatch', () => {
  it('announces a queue once when a first host takes its work, again only after no host did', () => {
    const opened: string[] = [];
    let hosts: FleetHost[] = [];
    const w = new PoolWatch(
      () => hosts,
      (q) => opened.push(q),
    );
    const look = (now: FleetHost[]) => {
      hosts = now;
      w.look();
    };
    look([host('a', 'up', { work: 'PAUSE', mail: 'UP' })]);
    expect(opened).toEqual(['mail']);
    look([host('a', 'up', { work: 'UP', mail: 'UP' })]);
    expect(opened).toEqual(['mail', 'work']);
    // A second host taking it, or counts changing, is no news.
    look([host('a', 'up', { work: 'UP', mail: 'UP' }), host('b', 'up', { work: 'UP' })]);
    expect(opened).toEqual(['mail', 'work']);
    // Down everywhere (a gone host's record, a DOWN or SCRIPTERROR queue), then back.
    look([host('a', 'gone', { work: 'UP' }), host('b', 'up', { work: 'SCRIPTERROR', mail: 'DOWN' })]);
    look([host('b', 'up', { work: 'UP', mail: 'DISK FULL' })]);
    expect(opened).toEqual(['mail', 'work', 'work']);
  });

  it('looks once per burst of changes, after it, and keeps what is open', () => {
    vi.useFakeTimers();
    try {
      let looks = 0;
      const w = new PoolWatch(
        () => (looks++, [host('a', 'up', { work: 'UP' })]),
        () => undefined,
      );
      for (let i = 0; i < 5; i++) w.changed();
      expect(looks).toBe(0);
      vi.advanceTimersByTime(100);
      expect(looks).toBe(1);
      expect([...w.opened]).toEqual(['work']);
      w.changed();
      w.close();
      vi.advanceTimersByTime(1000);
      expect(looks).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
