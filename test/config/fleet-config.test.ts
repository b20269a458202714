// config.json's `fleet` block: its defaults, and refusals that name the field, what was expected and what was received.
import { describe, expect, it } from 'vitest';
import { parseGlobalConfig } from '../../src/config/global-config.js';
import { defaultHostName, fleetSettings, isHttpUrl } from '../../src/config/fleet-config.js';

const parse = (fleet: unknown) => parseGlobalConfig(JSON.stringify({ host: 'h', port: 3333, fleet }), 'config.json');
const good = { name: 'prod', etcd: ['http://127.0.0.1:2379'], advertise: 'http://10.0.0.5:3333/' };

describe('fleet config', () => {
  it('fills in the host name, the TTL and a base URL without its trailing slash', () => {
    expect(fleetSettings(parse(good).fleet!, 'node-1.example.org')).toEqual({
      name: 'prod',
      etcd: ['http://127.0.0.1:2379'],
      host: 'node-1.example.org',
      advertise: 'http://10.0.0.5:3333',
      leaseTtlS: 10,
    });
    expect(fleetSettings(parse({ ...good, host: 'a', lease_ttl_s: 2 }).fleet!).leaseTtlS).toBe(2);
  });

  it("takes the machine's first label when its whole host name is no fleet name", () => {
    expect(defaultHostName('x'.repeat(70) + '.example')).toBe('rq-host');
    expect(defaultHostName('box.' + 'y'.repeat(70))).toBe('box');
  });

  it.each([
    [{ ...good, name: '' }, 'fleet.name: expected a name of 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit, received ""'],
    [{ ...good, etcd: 'http://a:2379' }, 'fleet.etcd: expected an array of etcd client URLs, received "http://a:2379"'],
    [{ ...good, etcd: [] }, 'fleet.etcd: expected at least one etcd client URL, received []'],
    [
      { ...good, etcd: ['unix:///run/etcd.sock'] },
      'fleet.etcd[0]: expected an etcd client URL such as "http://127.0.0.1:2379" (http or https), received "unix:///run/etcd.sock"',
    ],
    [{ ...good, advertise: undefined }, 'fleet.advertise: expected the base URL other hosts reach'],
    [{ ...good, host: 'a b' }, 'fleet.host: expected a name of 1-63 letters'],
    [{ ...good, lease_ttl_s: 1 }, 'fleet.lease_ttl_s: expected a whole number of seconds 2-86400, received 1'],
    [{ ...good, lease_ttl_s: '10' }, 'fleet.lease_ttl_s: expected a whole number of seconds 2-86400, received "10"'],
    ['prod', 'fleet: expected an object {"name": ..., "etcd": [urls], "advertise": url}, received "prod"'],
  ])('refuses %j', (fleet, text) => {
    expect(() => parse(fleet)).toThrow(text);
  });

  it('takes http and https URLs only, without credentials, query or fragment', () => {
    expect(['http://a:1', 'https://a', 'http://[::1]:2379'].every(isHttpUrl)).toBe(true);
    expect(['ftp://a', 'http://u:p@a', 'http://a/?x', 'http://a/#f', 'a:2379', ''].some(isHttpUrl)).toBe(false);
  });
});
