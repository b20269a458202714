// The other hosts of this host's fleet, let in by the web's basic_auth as user `rq-fleet` with the fleet's secret (kept in etcd, asked of rq-mgr).
import { FLEET_PEER_USER } from '../ipc/fleet-reply.js';
import type { MgrClient } from '../ipc/mgr-client.js';
import { checkCredentials } from './basic-auth.js';

/** A wrong password asks rq-mgr again at most this often (the secret may have been made since): a guesser costs it nothing. */
const ASK_AGAIN_MS = 1000;

/** Whether `password` is the fleet's secret; the secret is asked of rq-mgr once, and again only after a miss. */
export function fleetPeerCheck(mgr: Pick<MgrClient, 'fleetCredential'>, now: () => number = Date.now): (password: string) => Promise<boolean> {
  let secret: string | null = null;
  let askedAt = -Infinity;
  const matches = (password: string) => secret !== null && checkCredentials({ [FLEET_PEER_USER]: secret }, FLEET_PEER_USER, password);
  return async (password) => {
    if (matches(password)) return true;
    if (now() - askedAt < ASK_AGAIN_MS) return false;
    askedAt = now();
    const a = await mgr.fleetCredential(2000).catch(() => null);
    if (a?.ok) secret = a.value.password;
    return matches(password);
  };
}
