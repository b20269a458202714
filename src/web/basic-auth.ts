// HTTP Basic auth against config.json's basic_auth users (and, on a fleet host, the fleet's own user), compared in constant time.
import basicAuth from '@fastify/basic-auth';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { RqError, shown } from '../errors.js';
import { FLEET_PEER_USER } from '../ipc/fleet-reply.js';
import type { FleetPeer } from './fleet-peer.js';
import { checkCredentials } from './credentials.js';

export interface BasicAuthConfig {
  realm?: string;
  users: Record<string, string>;
}

/**
 * The 401 of a request whose credentials are missing, malformed or wrong, saying which: a user name
 * the client sent is echoed (it is the client's own), a password never.
 */
export function unauthorized(header: string | undefined, user?: string): RqError {
  const received =
    user !== undefined
      ? `user ${shown(user)} with a password that does not match`
      : header === undefined
        ? 'no Authorization header'
        : 'an Authorization header that is not Basic with a base64 name:password';
  return RqError.of('RQ_ERR_UNAUTHORIZED', received);
}

/** @fastify/basic-auth's own refusal of a missing or malformed header, as unauthorized() says it; null for any other error. */
export function headerRefusal(err: { code?: unknown }, header: string | undefined): RqError | null {
  return err.code === 'FST_BASIC_AUTH_MISSING_OR_BAD_AUTHORIZATION_HEADER' ? unauthorized(header) : null;
}

/**
 * Installs the check on every request of `app` (404s and static files included), except those
 * routed to one of `publicRoutes` (route patterns as registered, prefix included: metrics_public).
 * The route fastify matched is what is compared, not the URL's text, so no spelling of another
 * path (`//metrics/../q.json`, an encoded letter) can borrow the exemption.
 */
export async function installBasicAuth(
  app: FastifyInstance,
  cfg: BasicAuthConfig,
  publicRoutes: readonly string[] = [],
  /** On a fleet host: user `rq-fleet` with the fleet's secret, for the calls hosts make to each other (fleet-peer.ts). */
  fleetPeer?: FleetPeer,
): Promise<void> {
  /** Requests let in as `rq-fleet` (not as one of the host's own users of that name, who may do anything). */
  const peers = new WeakSet<FastifyRequest>();
  await app.register(basicAuth, {
    authenticate: { realm: cfg.realm ?? 'RQ' },
    validate: async (user, password, req) => {
      if (checkCredentials(cfg.users, user, password)) return;
      if (fleetPeer && user === FLEET_PEER_USER && (await fleetPeer.check(password))) return void peers.add(req);
      throw unauthorized(req.headers.authorization, user);
    },
  });
  const check = app.basicAuth as onRequestHookHandler;
  const open = new Set(publicRoutes);
  app.addHook('onRequest', function (req, reply, done) {
    if (req.routeOptions.url !== undefined && open.has(req.routeOptions.url)) return done();
    return check.call(this, req, reply, done);
  });
  if (!fleetPeer) return;
  // The route before anything reads the body; the one route a peer may use for a commit only says so in its body.
  app.addHook('onRequest', async (req) => (peers.has(req) ? fleetPeer.requireRoute(req) : undefined));
  app.addHook('preHandler', async (req) => (peers.has(req) ? fleetPeer.requireCommit(req) : undefined));
}
