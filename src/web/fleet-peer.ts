// The other hosts of this host's fleet, let in by the web's basic_auth as user `rq-fleet` with the fleet's secret (kept in etcd, asked of rq-mgr), to the calls hosts make to each other only.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { FLEET_PEER_USER } from '../ipc/fleet-reply.js';
import type { MgrClient } from '../ipc/mgr-client.js';
import { RqError, shown } from '../errors.js';
import { checkCredentials } from './credentials.js';
import { textParam } from './params.js';
import { pathParam, plainParams } from './request-params.js';

/**
 * The secret held is asked of rq-mgr again once it is this old, before it lets a call in or turns one away: a secret
 * changed in etcd (docs/fleet.md) shuts the old one out within it.
 */
const FRESH_MS = 1000;
/**
 * A password that does not match asks again once what is held is this old: a host that read a new secret first is let in,
 * and a guesser costs rq-mgr at most four questions a second, whatever its rate.
 */
const MISS_ASK_MS = 250;
/** A refused call is said at warn at most this often (the rest at debug): a secret misused, or hosts of two versions. */
const WARN_EVERY_MS = 60_000;

/**
 * What another host asks of this one, as `METHOD route` (routes as registered, without relative_root):
 * the pool relay's prep, attach, commit and its checks of a copy and of its queue (relay.ts), and the
 * dependency calls between hosts (fleet-refs.ts), and the fleet's view, by which rq doctor checks that a host's
 * advertise URL leads back to it (doctor-fleet.ts). Nothing else: no page, no admin action, no delete.
 */
const PEER_CALLS = new Set([
  'GET /fleet.json',
  'GET /q/:q',
  'GET /q/:q/:id/state.json',
  'POST /q/:q/new_message',
  'POST /q/:q/:id/attach/new',
  'POST /q/:q/:id',
  'POST /q/:q/:id/dependents',
  'POST /q/:q/:id/resolved',
]);
/** The bare message route answers deletes and destroys too: a peer may only commit there. */
const MESSAGE_ACTION = 'POST /q/:q/:id';
/** Short, so that the refused call is still in the first 120 characters a relay logs of an answer. */
const EXPECTED = 'a call between hosts of a fleet (docs/fleet.md)';

/** The fleet's own user: whether a password is the fleet's secret, and whether a request is one it may make. */
export interface FleetPeer {
  check(password: string): Promise<boolean>;
  /** Throws RQ_ERR_FORBIDDEN (403) for a route the hosts never ask of each other: before the body is read. */
  requireRoute(req: FastifyRequest): void;
  /** Throws RQ_ERR_FORBIDDEN for a message action other than a commit: with the body parsed. */
  requireCommit(req: FastifyRequest): void;
}

/**
 * The check of `rq-fleet`: the secret is asked of rq-mgr, again when what it answered is over FRESH_MS old, and on a
 * miss when over MISS_ASK_MS old; calls while it is asked wait for its answer. `prefix` is the web's relative_root.
 */
export function fleetPeer(mgr: Pick<MgrClient, 'fleetCredential'>, prefix: string, log: Logger, now: () => number = Date.now): FleetPeer {
  let secret: string | null = null;
  let askedAt = -Infinity;
  /** The question under way: calls arriving meanwhile wait for its answer instead of asking again. */
  let asking: Promise<void> | null = null;
  /** rq-mgr not answering (restarting, say) keeps the secret held: the hosts are not shut out by it. */
  const ask = () =>
    (asking ??= (async () => {
      askedAt = now();
      const a = await mgr.fleetCredential(2000).catch(() => null);
      if (a?.ok) secret = a.value.password;
    })().finally(() => (asking = null)));
  let warnedAt = -Infinity;
  const matches = (password: string) => secret !== null && checkCredentials({ [FLEET_PEER_USER]: secret }, FLEET_PEER_USER, password);
  const callOf = (req: FastifyRequest) => {
    const route = req.routeOptions.url ?? '';
    return `${req.method} ${route.startsWith(prefix) ? route.slice(prefix.length) : route}`;
  };
  const refuse = (req: FastifyRequest): never => {
    const warn = now() - warnedAt >= WARN_EVERY_MS;
    if (warn) warnedAt = now();
    log[warn ? 'warn' : 'debug']({ call: `${req.method} ${req.url}`, ip: req.ip }, `${FLEET_PEER_USER} refused: not a call between hosts of a fleet`);
    throw RqError.of('RQ_ERR_FORBIDDEN', `user ${FLEET_PEER_USER}`, EXPECTED, shown(`${req.method} ${req.url}`));
  };
  return {
    async check(password) {
      if (asking) await asking;
      else if (now() - askedAt >= FRESH_MS) await ask();
      if (matches(password)) return true;
      if (now() - askedAt < MISS_ASK_MS) return false;
      await ask();
      return matches(password);
    },
    requireRoute(req) {
      const call = callOf(req);
      // The queue segment's route also serves its page and its text: a peer reads `<q>.json` only.
      if (!PEER_CALLS.has(call) || (call === 'GET /q/:q' && !pathParam(req, 'q').endsWith('.json'))) refuse(req);
    },
    requireCommit(req) {
      if (callOf(req) !== MESSAGE_ACTION) return;
      // Read as the route reads it; a multipart body is read by the route alone: refused.
      if (req.isMultipart() || textParam(plainParams(req), '_method') !== 'commit') refuse(req);
    },
  };
}
