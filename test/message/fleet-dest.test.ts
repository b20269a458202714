// Pool dests: fleet:<queue> parsed, and accepted only in the relay queue of a host in a fleet, every refusal naming dest.
import { describe, expect, it } from 'vitest';
import { checkFleetDest, isFleetDest, poolName, poolQueue } from '../../src/message/fleet-dest.js';
import { isRelayedDest } from '../../src/message/relay-dests.js';

describe('fleet dests', () => {
  it('reads fleet:<queue>', () => {
    expect(isFleetDest('fleet:work')).toBe(true);
    expect(isFleetDest('work')).toBe(false);
    expect(poolName('fleet:work')).toBe('work');
    expect(poolName('http://h/q/work')).toBeNull();
    expect(poolQueue('fleet:work')).toBe('work');
    expect(isRelayedDest('fleet:work') && isRelayedDest('HTTP://h/q/w') && !isRelayedDest('work')).toBe(true);
  });

  it('refuses a bad queue name and the relay queue itself, naming dest', () => {
    expect(() => poolQueue('fleet:')).toThrow(
      'dest: expected fleet:<queue> with a valid queue name (queue name: expected a non-empty name, received ""), received "fleet:"',
    );
    expect(() => poolQueue('fleet:a/b')).toThrow(/^dest: /);
    // What a queue name takes is told in full, and the dest as sent, not cut short inside the received part.
    expect(() => poolQueue('fleet:bad name')).toThrow(
      `dest: expected fleet:<queue> with a valid queue name (queue name: expected letters, digits, '-' or '_' (none of / . space , ; : @ " ( ) { } \\ + = ' ^ \` # ~ ? [ ] % | $ & < > *, control bytes or invisible characters), received "bad name"), received "fleet:bad name"`,
    );
    expect(() => poolQueue('fleet:relay')).toThrow(/^dest: expected fleet:<queue> naming a queue other than relay/);
  });

  it('is accepted only in the relay queue of a host in a fleet; other dests pass untouched', () => {
    expect(() => checkFleetDest('fleet:work', { inFleet: true, queue: 'relay' })).not.toThrow();
    expect(() => checkFleetDest('fleet:work', { inFleet: false, queue: 'relay' })).toThrow(
      'dest: expected a queue name or an http(s) URL (fleet:<queue> needs this host in a fleet; config.json names none), received "fleet:work"',
    );
    expect(() => checkFleetDest('fleet:work', { inFleet: true, queue: 'work' })).toThrow(/^dest: expected fleet:<queue> only in the relay queue/);
    expect(() => checkFleetDest('work', { inFleet: false, queue: 'work' })).not.toThrow();
  });
});
