// PoolWatch: from each change of the fleet view, the queues that had no host taking their work and now have one.
import { describe, expect, it } from 'vitest';
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
    const w = new PoolWatch((q) => opened.push(q));
    w.changed([host('a', 'up', { work: 'PAUSE', mail: 'UP' })]);
    expect(opened).toEqual(['mail']);
    w.changed([host('a', 'up', { work: 'UP', mail: 'UP' })]);
    expect(opened).toEqual(['mail', 'work']);
    // A second host taking it, or counts changing, is no news.
    w.changed([host('a', 'up', { work: 'UP', mail: 'UP' }), host('b', 'up', { work: 'UP' })]);
    expect(opened).toEqual(['mail', 'work']);
    // Down everywhere (a gone host's record, a DOWN or SCRIPTERROR queue), then back.
    w.changed([host('a', 'gone', { work: 'UP' }), host('b', 'up', { work: 'SCRIPTERROR', mail: 'DOWN' })]);
    w.changed([host('b', 'up', { work: 'UP', mail: 'DISK FULL' })]);
    expect(opened).toEqual(['mail', 'work', 'work']);
  });
});
