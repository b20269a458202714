// Which destinations the local relay queue carries: an http(s) URL of a far host (spec §11.1), and a pool of this host's fleet.
import { isFleetDest } from './fleet-dest.js';

const REMOTE = /^https?:/i;

export function isRemoteUrl(dest: string): boolean {
  return REMOTE.test(dest);
}

/** A create or a timer for such a dest goes into the `relay` queue, whose script delivers it. */
export function isRelayedDest(dest: string): boolean {
  return isRemoteUrl(dest) || isFleetDest(dest);
}
