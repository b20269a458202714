// HTTP Basic auth against config.json's basic_auth users (and, on a fleet host, the fleet's own user), compared in constant time.
import basicAuth from '@fastify/basic-auth';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { RqError } from '../errors.js';
import { FLEET_PEER_USER } from '../ipc/fleet-reply.js';
import type { FleetPeer } from './fleet-peer.js';
import { checkCredentials } from './credentials.js';

export interface BasicAuthConfig {
  realm?: string;
  users: Record<string, string>;
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
      throw RqError.of('RQ_ERR_UNAUTHORIZED');
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
