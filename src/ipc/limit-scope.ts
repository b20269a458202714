// How a concurrency key's fleet scope is said (`rq limits`, the dashboard's #limits): the slots other hosts hold and why this host cannot take any.
import type { LimitKeyStatus } from './mgr-client.js';

/** `fleet`, ` (2 held on other hosts)`, ` stalled: <why>` for a key the fleet shares; '' for this host's own keys. */
export function fleetScope(s: Pick<LimitKeyStatus, 'scope' | 'held_elsewhere' | 'stalled'>): string {
  if (s.scope !== 'fleet') return '';
  const elsewhere = typeof s.held_elsewhere === 'number' && s.held_elsewhere > 0 ? ` (${s.held_elsewhere} held on other hosts)` : '';
  const stalled = typeof s.stalled === 'string' && s.stalled !== '' ? ` stalled: ${s.stalled}` : '';
  return `fleet${elsewhere}${stalled}`;
}
