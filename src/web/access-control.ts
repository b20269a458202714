// Who may talk to the web process: allowed_ips, same-origin browser POSTs, and protective response headers.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { hostHeaderName, isLoopback } from '../config/exposure.js';
import { shown } from '../errors.js';

/** Classic rule: the client IP string must contain one of the entries (empty list = everyone). */
export function ipAllowed(ip: string, allowed: string[] | undefined): boolean {
  if (!allowed || allowed.length === 0) return true;
  return allowed.some((entry) => ip.includes(entry));
}

/**
 * DNS rebinding: a page of evil.example whose name now points at this machine sends
 * `Host: evil.example`, and its Origin matches that Host; only the Host allow-list tells it apart.
 * A second Host line is refused outright (RFC 9112 §3.2): node keeps the first, and a proxy in front
 * may have routed or checked by the other.
 */
function hostProblem(req: FastifyRequest, allowed: ReadonlySet<string>): { status: number; text: string } | null {
  const lines = hostLines(req.raw.rawHeaders);
  if (lines > 1) return { status: 400, text: `400 - Host: expected one header, received ${lines}` };
  // HTTP/1.0 clients may send none; every browser sends one, so its absence is no rebinding. HTTP/1.1 requires it (RFC 9112 §3.2).
  if (req.headers.host === undefined)
    return req.raw.httpVersion === '1.0' ? null : { status: 400, text: '400 - Host: expected one header (HTTP/1.1 requires it), received none' };
  const name = hostHeaderName(req.headers.host);
  if (name !== null && (allowed.has(name) || isLoopback(name))) return null;
  return {
    status: 421,
    text: `421 - Host: expected a name of this server (host, addr, localhost or allowed_hosts in config/config.json), received ${shown(req.headers.host)}`,
  };
}

/** How many Host lines a request's head holds (`rawHeaders`: name, value, name, value, ...). */
function hostLines(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') n++;
  return n;
}

/**
 * A browser sends Origin with a POST; one naming another host is a cross-site form post and is
 * refused. Clients without Origin (curl, relays, the CLI) are not browsers and are served, unless
 * the request says itself that a page of another site sent it (`Sec-Fetch-Site`, which a page cannot set).
 */
export function originProblem(req: FastifyRequest): string | null {
  if (req.method !== 'POST') return null;
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if (origin === undefined && (site === 'cross-site' || site === 'same-site')) return `403 - Forbidden: cross-origin POST refused (Sec-Fetch-Site ${site})`;
  if (origin === undefined) return null;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return `403 - Forbidden: cross-origin POST refused (Origin ${origin} is not a URL)`;
  }
  if (host !== req.headers.host) return `403 - Forbidden: cross-origin POST refused (Origin ${origin} does not match Host ${req.headers.host ?? '(none)'})`;
  return null;
}

/**
 * What every request meets first, routed or refused by the router (router-refusals.ts): the
 * protective headers set, then two Host lines (400), a foreign Host (421) or an address not allowed (403) refused.
 */
export function admissionProblem(
  req: FastifyRequest,
  reply: FastifyReply,
  hosts: ReadonlySet<string>,
  allowedIps: string[] | undefined,
): { status: number; text: string } | null {
  securityHeaders(req, reply);
  const host = hostProblem(req, hosts);
  if (host) return host;
  return ipAllowed(req.ip, allowedIps) ? null : { status: 403, text: 'Forbidden' };
}

// Inline styles stay allowed: ansi_up colours log text with style attributes. Scripts come only from this
// server: /js/, and Swagger UI's bundle under /docs/static/ (openapi/api-docs.ts), which needs nothing more.
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'; form-action 'self'; base-uri 'none'";

function securityHeaders(_req: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('X-Frame-Options', 'SAMEORIGIN');
  reply.header('Referrer-Policy', 'same-origin');
  reply.header('Content-Security-Policy', CSP);
}
