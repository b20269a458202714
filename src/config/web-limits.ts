// The web's connection bounds and timeouts, each from config/config.json or its default (docs/http-api.md "Connection limits").
import type { GlobalConfig } from './global-config.js';

export interface WebLimits {
  /** Open HTTP connections at once; past it a new one takes the place of an idle one (web/connection-table.ts), or is answered 503 when none is idle. */
  maxConnections: number;
  /** Open connections from one client address (an IPv6 /64); past it a new one takes the place of that address's oldest idle one, or is answered 429. Loopback is not exempt: a local runaway is still a runaway. */
  maxPerAddress: number;
  /** Server-Sent Events streams at once, /events and log tails together. */
  maxSseStreams: number;
  /** Log tails of one message at once. */
  maxTailsPerMessage: number;
  /**
   * A request's headers must be in this long after its connection opened (or its previous reply): a
   * slow drip or a silent opener is cut with 408. A few seconds: a client that has connected sends
   * its headers at once, and each such connection holds a slot of its address until then.
   */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  /** At shutdown, requests in flight get this long to finish before their connections are cut. */
  shutdownGraceMs: number;
  /** What a refused client is told to wait (Retry-After, seconds). */
  retryAfterS: number;
}

export const DEFAULT_WEB_LIMITS: WebLimits = {
  maxConnections: 1024,
  maxPerAddress: 128,
  maxSseStreams: 1000,
  maxTailsPerMessage: 100,
  headersTimeoutMs: 5_000,
  keepAliveTimeoutMs: 5_000,
  shutdownGraceMs: 10_000,
  retryAfterS: 5,
};

export function webLimits(c: GlobalConfig): WebLimits {
  const d = DEFAULT_WEB_LIMITS;
  const ms = (s: number | undefined, dflt: number) => (s === undefined ? dflt : s * 1000);
  return {
    maxConnections: c.max_connections ?? d.maxConnections,
    maxPerAddress: c.max_connections_per_address ?? d.maxPerAddress,
    maxSseStreams: c.max_sse_streams ?? d.maxSseStreams,
    maxTailsPerMessage: c.max_tails_per_message ?? d.maxTailsPerMessage,
    headersTimeoutMs: ms(c.headers_timeout_s, d.headersTimeoutMs),
    keepAliveTimeoutMs: ms(c.keep_alive_timeout_s, d.keepAliveTimeoutMs),
    shutdownGraceMs: ms(c.shutdown_grace_s, d.shutdownGraceMs),
    retryAfterS: d.retryAfterS,
  };
}
