// Who a connection counts against in the web's connection limits: an IPv4 address, or the /64 of an IPv6 one.
import net from 'node:net';

/**
 * The peer a connection from `address` belongs to. An IPv4 client has one address, but an IPv6
 * host is routinely given a whole /64 and can pick a new address from it for every connection,
 * so a per-address limit would not limit it at all: its /64 is the peer (as nginx's
 * `limit_conn` users are told to key on). An IPv4 address seen through a dual-stack socket
 * (`::ffff:127.0.0.1`) is the same client as `127.0.0.1`.
 */
export function peerKey(address: string | undefined): string {
  if (address === undefined || address === '') return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (net.isIPv4(address)) return address;
  if (!net.isIPv6(address)) return address;
  return `${expandIPv6(address.replace(/%.*$/, '')).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, without leading zeros ("2001:db8::1" → 2001 db8 0 0 0 0 0 1). */
function expandIPv6(address: string): string[] {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const groups = (s: string | undefined) => (s ? s.split(':') : []);
  const left = groups(head);
  const right = groups(tail);
  // A trailing dotted quad (::1.2.3.4) is the last two groups; only the first four matter here.
  const rightLen = right.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const middle = tail === undefined ? [] : new Array<string>(8 - left.length - rightLen).fill('0');
  return [...left, ...middle, ...right].map((g) => (g.includes('.') ? g : (parseInt(g, 16) || 0).toString(16)));
}
