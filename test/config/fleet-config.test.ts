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
      'fleet.etcd[0]: expected an etcd client URL such as "http://127.0.0.1:2379" (http or https; no user, query or fragment), received "unix:///run/etcd.sock"',
    ],
    [{ ...good, advertise: undefined }, 'fleet.advertise: expected the base URL other hosts reach'],
    [{ ...good, host: 'a b' }, 'fleet.host: expected a name of 1-63 letters'],
    [{ ...good, lease_ttl_s: 1 }, 'fleet.lease_ttl_s: expected a whole number of seconds 2-86400, received 1'],
    [{ ...good, lease_ttl_s: '10' }, 'fleet.lease_ttl_s: expected a whole number of seconds 2-86400, received "10"'],
    [
      { ...good, etcd_cafile: '/ca.pem' },
      'fleet.etcd_cafile: unknown setting; expected one of name, etcd, host, advertise, lease_ttl_s, etcd_ca, etcd_cert, etcd_key, etcd_user, etcd_password_file',
    ],
    [{ ...good, leasettl: 10 }, 'fleet.leasettl: unknown setting; expected one of name, etcd, host, advertise, lease_ttl_s'],
    [{ ...good, Host: 'x2' }, 'fleet.Host: unknown setting; did you mean "host"?'],
    [{ ...good, host: 'a', Host: 'x2' }, 'fleet.Host: unknown setting; expected one of name,'],
    [{ ...good, foo: 1 }, 'fleet.foo: unknown setting; expected one of'],
    ['prod', 'fleet: expected an object {"name": ..., "etcd": [urls], "advertise": url}, received "prod"'],
  ])('refuses %j', (fleet, text) => {
    expect(() => parse(fleet)).toThrow(text);
  });

  const tls = { ...good, etcd: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'] };
  it('takes TLS files and an etcd user beside https endpoints, as paths', () => {
    const full = {
      ...tls,
      etcd_ca: '/etc/rq/etcd-ca.pem',
      etcd_cert: '/etc/rq/etcd-client.pem',
      etcd_key: '/etc/rq/etcd-client-key.pem',
      etcd_user: 'rq',
      etcd_password_file: '/etc/rq/etcd-password',
    };
    expect(parse(full).fleet).toEqual(full);
    // A user needs no TLS (etcd takes a password over plain http), and a CA alone verifies etcd without a client certificate.
    expect(parse({ ...good, etcd_user: 'rq', etcd_password_file: '/p' }).fleet?.etcd_user).toBe('rq');
    expect(parse({ ...tls, etcd_ca: '/ca.pem' }).fleet?.etcd_ca).toBe('/ca.pem');
  });

  it.each([
    [{ ...tls, etcd_ca: 'ca.pem' }, 'fleet.etcd_ca: expected an absolute path of a PEM CA bundle that signed etcd\'s server certificate, received "ca.pem"'],
    [{ ...tls, etcd_ca: 7 }, "fleet.etcd_ca: expected an absolute path of a PEM CA bundle that signed etcd's server certificate, received 7"],
    [{ ...tls, etcd_cert: './c.pem', etcd_key: '/k.pem' }, 'fleet.etcd_cert: expected an absolute path of a PEM client certificate, received "./c.pem"'],
    [
      { ...tls, etcd_cert: '/c.pem', etcd_key: 'k.pem' },
      'fleet.etcd_key: expected an absolute path of the PEM client certificate\'s private key, received "k.pem"',
    ],
    [{ ...tls, etcd_cert: '/c.pem' }, 'fleet.etcd_key: expected the path of the client certificate\'s private key (PEM) beside "etcd_cert", received nothing'],
    [{ ...tls, etcd_key: '/k.pem' }, 'fleet.etcd_cert: expected the path of the client certificate (PEM) beside "etcd_key", received nothing'],
    [{ ...good, etcd_user: 'rq' }, 'fleet.etcd_password_file: expected the path of a file holding the password of "etcd_user", received nothing'],
    [{ ...good, etcd_password_file: '/p' }, 'fleet.etcd_user: expected the etcd user name whose password "etcd_password_file" holds, received nothing'],
    [{ ...good, etcd_user: '', etcd_password_file: '/p' }, 'fleet.etcd_user: expected an etcd user name (non-empty string), received ""'],
    [
      { ...good, etcd_user: 'rq', etcd_password_file: 'pw' },
      'fleet.etcd_password_file: expected an absolute path of a file holding the etcd user\'s password, received "pw"',
    ],
    [
      { ...good, etcd_user: 'rq', etcd_password: 'pw' },
      'fleet.etcd_password: expected no password in config.json: the path of a file holding it, as "etcd_password_file", received a value not shown (a secret)',
    ],
    [{ ...good, etcd_ca: '/ca.pem' }, 'fleet.etcd_ca: expected only with https:// etcd URLs ("fleet.etcd" has "http://127.0.0.1:2379"), received "/ca.pem"'],
    [
      { ...good, etcd: ['https://a:2379', 'http://b:2379'], etcd_cert: '/c.pem', etcd_key: '/k.pem' },
      'fleet.etcd_cert: expected only with https:// etcd URLs ("fleet.etcd" has "http://b:2379"), received "/c.pem"; fleet.etcd_key: expected only with https://',
    ],
  ])('refuses TLS and user fields %j', (fleet, text) => {
    expect(() => parse(fleet)).toThrow(text);
  });

  it('a refused password in the block or in basic_auth is named, never shown', () => {
    for (const config of [
      { host: 'h', port: 3333, fleet: { ...good, etcd_user: 'rq', etcd_password: 'hunter2' } },
      { host: 'h', port: 3333, basic_auth: { users: { bob: ['hunter2'] } } },
    ]) {
      let text = '';
      try {
        parseGlobalConfig(JSON.stringify(config), 'config.json');
      } catch (err) {
        text = (err as Error).message;
      }
      expect(text).toMatch(/^config\.json: (fleet\.etcd_password|basic_auth\.users\.bob): expected .*, received a value not shown \(a secret\)$/);
      expect(text).not.toContain('hunter2');
    }
  });

  it('takes http and https URLs only, without credentials, query or fragment', () => {
    expect(['http://a:1', 'https://a', 'http://[::1]:2379'].every(isHttpUrl)).toBe(true);
    expect(['ftp://a', 'http://u:p@a', 'http://a/?x', 'http://a/#f', 'a:2379', ''].some(isHttpUrl)).toBe(false);
  });
});
