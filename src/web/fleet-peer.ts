// The other hosts of this host's fleet, let in by the web's basic_auth as user `rq-fleet` with the fleet's secret (kept in etcd, asked of rq-mgr), to the calls hosts make to each other only.
import type { FastifyRequest } from 'fastify';
import { FLEET_PEER_USER } from '../ipc/fleet-reply.js';
import type { MgrClient } from '../ipc/mgr-client.js';
import { RqError, shown } from '../errors.js';
import { checkCredentials } from './basic-auth.js';

/** A wrong password asks rq-mgr again at most this often (the secret may have been made since): a guesser costs it nothing. */
const ASK_AGAIN_MS = 1000;

/**
 * What another host asks of this one, as `METHOD route` (routes as registered, without relative_root):
 * the pool relay's prep, attach, commit and its checks of a copy and of its queue (relay.ts), and the
 * dependency calls between hosts (fleet-refs.ts). Nothing else: no page, no admin action, no delete.
 */
const PEER_CALLS = new Set([
  'GET /q/:q',
  'GET /q/:q/:id/state.json',
  'POST /q/:q/new_message',
  'POST /q/:q/:id/attach/new',
  'POST /q/:q/:id',
  'POST /q/:q/:id/dependents',
  'POST /q/:q/:id/resolved',
]);
const EXPECTED = `one of the calls hosts of a fleet make to each other (docs/fleet.md): ${[...PEER_CALLS].join(', ')}, the first as <q>.json, the bare message route with _method=commit only`;

/** The fleet's own user: whether a password is the fleet's secret, and whether a request is one it may make. */
export interface FleetPeer {
  check(password: string): Promise<boolean>;
  /** Throws RQ_ERR_FORBIDDEN (403) for a request the hosts never make of each other; call it with the body parsed. */
  requireAllowed(req: FastifyRequest): void;
}

/** The check of `rq-fleet`: the secret is asked of rq-mgr once, and again only after a miss; `prefix` is the web's relative_root. */
export function fleetPeer(mgr: Pick<MgrClient, 'fleetCredential'>, prefix: string, now: () => number = Date.now): FleetPeer {
  let secret: string | null = null;
  let askedAt = -Infinity;
  const matches = (password: string) => secret !== null && checkCredentials({ [FLEET_PEER_USER]: secret }, FLEET_PEER_USER, password);
  return {
    async check(password) {
      if (matches(password)) return true;
      if (now() - askedAt < ASK_AGAIN_MS) return false;
      askedAt = now();
      const a = await mgr.fleetCredential(2000).catch(() => null);
      if (a?.ok) secret = a.value.password;
      return matches(password);
    },
    requireAllowed(req) {
      const route = req.routeOptions.url ?? '';
      const call = `${req.method} ${route.startsWith(prefix) ? route.slice(prefix.length) : route}`;
      if (!PEER_CALLS.has(call) || !detailAllowed(call, req))
        throw RqError.of('RQ_ERR_FORBIDDEN', `user ${FLEET_PEER_USER}`, EXPECTED, shown(`${req.method} ${req.url}`));
    },
  };
}

/** The two routes that answer more than a peer asks: the queue segment's page (only `.json`), and the message's actions (only commit). */
function detailAllowed(call: string, req: FastifyRequest): boolean {
  if (call === 'GET /q/:q') return String((req.params as Record<string, unknown>).q).endsWith('.json');
  if (call !== 'POST /q/:q/:id') return true;
  // Read as the route reads it (request-params.ts): the body's field over the query's. A multipart body is not read here, so it is refused.
  if (req.isMultipart()) return false;
  const field = (o: unknown) => (typeof o === 'object' && o !== null && Object.hasOwn(o, '_method') ? (o as Record<string, unknown>)._method : undefined);
  return (field(req.body) ?? field(req.query)) === 'commit';
}
