// Who a connection counts against (src/web/peer-key.ts): an IPv4 address, the same address seen through a dual-stack socket, an IPv6 /64.
import { describe, expect, it } from 'vitest';
import { peerKey } from '../../src/web/peer-key.js';

describe('peerKey', () => {
  it('an IPv4 address is its own peer, also as an IPv4-mapped IPv6 address', () => {
    expect(peerKey('127.0.0.1')).toBe('127.0.0.1');
    expect(peerKey('127.0.0.2')).toBe('127.0.0.2');
    expect(peerKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(peerKey('::FFFF:10.1.2.3')).toBe('10.1.2.3');
  });

  it('every address of one IPv6 /64 is one peer, however it is written', () => {
    const k = '2001:db8:0:1::/64';
    expect(peerKey('2001:db8:0:1::1')).toBe(k);
    expect(peerKey('2001:0db8:0000:0001:ffff:1:2:3')).toBe(k);
    expect(peerKey('2001:db8::1:0:0:0:9')).toBe(k);
    expect(peerKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(peerKey('2001:db8:0:2::1')).not.toBe(k);
  });

  it('loopback ::1 is one peer; an unknown address is one too', () => {
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('::')).toBe('0:0:0:0::/64');
    expect(peerKey(undefined)).toBe('unknown');
    expect(peerKey('')).toBe('unknown');
  });

  it('a trailing dotted quad counts as the last two groups', () => {
    expect(peerKey('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/64');
    expect(peerKey('1:2:3:4:5:6:1.2.3.4')).toBe('1:2:3:4::/64');
  });
});
