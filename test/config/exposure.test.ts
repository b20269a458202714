// The Host allow-list and the start-up warnings, as pure rules.
import { describe, expect, it } from 'vitest';
import { allowedHostNames, exposureWarnings, hostHeaderName, isLoopback } from '../../src/config/exposure.js';
import type { GlobalConfig } from '../../src/config/global-config.js';

const base: GlobalConfig = { host: 'rq.example.com', port: 3333, addr: '127.0.0.1' };

describe('hostHeaderName', () => {
  it.each([
    ['localhost', 'localhost'],
    ['LocalHost:3333', 'localhost'],
    ['127.0.0.1:80', '127.0.0.1'],
    ['[::1]:3333', '::1'],
    ['[::1]', '::1'],
    ['rq.example.com', 'rq.example.com'],
  ])('%s is %s', (header, name) => expect(hostHeaderName(header)).toBe(name));

  it.each(['', 'a b', 'host:port', 'a:1:2', '[zz]:1', 'x:123456', '[::1'])('%j is malformed', (header) => expect(hostHeaderName(header)).toBeNull());
  it('no header is no name', () => expect(hostHeaderName(undefined)).toBeNull());
});

describe('allowedHostNames and isLoopback', () => {
  it('the config host and addr, loopback and allowed_hosts, in lower case', () => {
    expect([...allowedHostNames({ ...base, addr: '10.0.0.5', allowed_hosts: ['RQ.internal', '[fd00::1]'] })].sort()).toEqual(
      ['127.0.0.1', '::1', '10.0.0.5', 'fd00::1', 'localhost', 'rq.example.com', 'rq.internal'].sort(),
    );
  });
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['[::1]', true],
    ['localhost', true],
    ['0.0.0.0', false],
    ['10.0.0.1', false],
    ['::', false],
    ['127.example.com', false],
    // Only a leading '[' and a trailing ']' are an address's brackets; one anywhere else stays and spoils it.
    ['[127.0.0.1]', true],
    ['[::1', true],
    ['::1]', true],
    ['::[1]', false],
    ['[::]1', false],
    ['::]1', false],
    ['[:[:1]', false],
  ])('%s loopback: %s', (addr, loopback) => expect(isLoopback(addr)).toBe(loopback));
});

describe('exposureWarnings', () => {
  it('none for the defaults', () => expect(exposureWarnings(base, 0o600)).toEqual([]));
  it('no addr means loopback (127.0.0.1), as the web binds it', () => expect(exposureWarnings({ host: 'rq.example.com', port: 3333 }, 0o600)).toEqual([]));
  it('a web beyond loopback without basic_auth', () => {
    expect(exposureWarnings({ ...base, addr: '0.0.0.0' }, 0o600)).toEqual([
      'the web listens on 0.0.0.0, beyond this machine, without basic_auth: anyone who can reach port 3333 can read and create messages (docs/security.md)',
    ]);
    expect(exposureWarnings({ ...base, addr: '0.0.0.0', basic_auth: { users: { a: 'b' } } }, 0o600)).toEqual([]);
  });
  it('queue creation without basic_auth', () => {
    expect(exposureWarnings({ ...base, allow_new_queue: true }, 0o600)).toEqual([
      'allow_new_queue is true without basic_auth: anyone who can reach the web can start queues that run the scripts of script_dirs (docs/security.md)',
    ]);
  });
  it('passwords in a config others can read', () => {
    const auth = { basic_auth: { users: { a: 'b' } } };
    expect(exposureWarnings({ ...base, ...auth }, 0o640)).toEqual([
      'config/config.json holds basic_auth passwords and is readable by others (mode 640): chmod 600 it',
    ]);
    expect(exposureWarnings({ ...base, ...auth }, 0o100600)).toEqual([]);
    expect(exposureWarnings(base, 0o644)).toEqual([]);
  });
});
