// The note rq sendmesg adds for a pool message no host takes now: the queue nowhere, nowhere UP, or the fleet unread from etcd; none when a host takes it.
import { describe, expect, it } from 'vitest';
import { poolNote } from '../../src/cli/pool-note.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';

const view = (queues: Record<string, string>, member: FleetView['member'] = { state: 'member', since: '' }, reachable = true): FleetView => ({
  fleet: 'f',
  host: 's',
  member,
  etcd: { endpoints: ['http://127.0.0.1:2379'], reachable },
  hosts: Object.entries(queues).map(([host, status]) => ({
    host,
    state: 'up',
    url: `http://${host}:3333/`,
    since: null,
    queues: { work: { status, ready: 0, running: 0, workers: 2 } },
  })),
});

describe('poolNote', () => {
  it('says nothing when a host takes the queue; names the queue nowhere, or the hosts that have it and their status', () => {
    expect(poolNote(view({ a: 'PAUSE', b: 'UP' }), 'work', false)).toBeNull();
    expect(poolNote(view({ a: 'UP' }), 'wrok', false)).toBe(
      "rq: no host of fleet f has queue wrok now: the message waits in the relay queue until one does (rq queues --fleet lists the fleet's queues)",
    );
    expect(poolNote(view({ a: 'PAUSE', b: 'DOWN' }), 'work', true)).toBe(
      'rq: no host of fleet f has queue work UP now (a PAUSE, b DOWN): the message, once committed, waits in the relay queue until one is',
    );
  });

  it('a host whose view is not read from etcd says so, since and why, unless its last view has a host taking the queue', () => {
    const since = '2026-12-07T17:40:00.000Z';
    const cutOff = { state: 'unreachable' as const, since, reason: 'etcd did not answer (http://127.0.0.1:23799): 14 UNAVAILABLE' };
    expect(poolNote(view({}, cutOff, false), 'work', false)).toBe(
      `rq: fleet f could not be read from etcd (this host is unreachable since ${since}: etcd did not answer (http://127.0.0.1:23799): 14 UNAVAILABLE): ` +
        'the message waits in the relay queue until it can be and a host has queue work UP',
    );
    expect(poolNote(view({ a: 'PAUSE' }, { state: 'joining', since }, false), 'work', true)).toBe(
      `rq: fleet f could not be read from etcd (this host is joining since ${since}): the message, once committed, waits in the relay queue until it can be and a host has queue work UP`,
    );
    expect(poolNote(view({}, { state: 'member', since }, false), 'work', false)).toBe(
      'rq: fleet f could not be read from etcd (etcd does not answer this host now): the message waits in the relay queue until it can be and a host has queue work UP',
    );
    // The relay tries a host its last view has taking the queue.
    expect(poolNote(view({ a: 'UP' }, cutOff, false), 'work', false)).toBeNull();
    // A host refused its name still reads the fleet: its notes are a member's.
    expect(poolNote(view({ a: 'UP' }, { state: 'refused', since, reason: 'held' }), 'work', false)).toBeNull();
    expect(poolNote(view({ a: 'PAUSE' }, { state: 'refused', since, reason: 'held' }), 'work', false)).toBe(
      'rq: no host of fleet f has queue work UP now (a PAUSE): the message waits in the relay queue until one is',
    );
  });
});
