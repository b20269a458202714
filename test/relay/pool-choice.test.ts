// The pool's choice: only hosts up with the queue UP, the most free capacity first, ties drawn.
import { describe, expect, it } from 'vitest';
import type { FleetHost, FleetView } from '../../src/ipc/fleet-reply.js';
import { choosePoolHost, poolHosts } from '../../src/relay/pool-choice.js';

const fig = (status: string, ready: number, running: number, workers = 2) => ({ status, ready, running, workers });
const host = (name: string, queues: FleetHost['queues'], state: FleetHost['state'] = 'up'): FleetHost => ({
  host: name,
  state,
  url: `http://${name}:3333/`,
  since: null,
  queues,
});
const view = (hosts: FleetHost[]): FleetView => ({
  fleet: 'f',
  host: 'a',
  member: { state: 'member', since: '' },
  etcd: { endpoints: [], reachable: true },
  hosts,
});

describe('poolHosts', () => {
  it('takes hosts up with the queue UP, and skips gone hosts, other queues and every other status', () => {
    const v = view([
      host('up', { work: fig('UP', 1, 0) }),
      host('gone', { work: fig('UP', 0, 0) }, 'gone'),
      host('other', { else: fig('UP', 0, 0) }),
      ...['PAUSE', 'DOWN', 'SCRIPTERROR', 'DISK FULL'].map((s) => host(s, { work: fig(s, 0, 0) })),
    ]);
    expect(poolHosts(v, 'work').map((h) => [h.host, h.free])).toEqual([['up', 1]]);
  });
});

describe('choosePoolHost', () => {
  const hosts = poolHosts(view([host('a', { work: fig('UP', 0, 2) }), host('b', { work: fig('UP', 0, 0) }), host('c', { work: fig('UP', 0, 0) })]), 'work');

  it('chooses the most free capacity, drawing among ties', () => {
    expect(choosePoolHost(hosts, () => 0)?.host).toBe('b');
    expect(choosePoolHost(hosts, () => 0.99)?.host).toBe('c');
  });

  it('still chooses when every host has a backlog, and none when no host takes the queue', () => {
    const busy = poolHosts(view([host('a', { work: fig('UP', 5, 2) }), host('b', { work: fig('UP', 3, 2) })]), 'work');
    expect(choosePoolHost(busy)?.host).toBe('b');
    expect(choosePoolHost([])).toBeNull();
  });
});
