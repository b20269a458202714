// Where a fleet lives in etcd: `/rq/fleet/<name>/hosts/<host>` (lease-bound, the live members), `/rq/fleet/<name>/secret` (the hosts' shared password), `/rq/fleet/<name>/seen/<host>` (kept, when each joined and left) and `/rq/fleet/<name>/limits/<key>/waiters/<host>/<ref>` (lease-bound, a fleet limit's line).
import { isObject, isString } from '../ipc/answer.js';

/** Every rq key starts here, so an etcd shared with other programs keeps rq's keys apart. */
export const ETCD_PREFIX = '/rq';

export interface FleetKeys {
  /** Everything of the fleet: what a view watches. */
  fleet: string;
  /** The password hosts of the fleet give each other (fleet-secret.ts); kept, not bound to a lease. */
  secret: string;
  hosts: string;
  seen: string;
  host: (host: string) => string;
  seenHost: (host: string) => string;
  /** The host name of a key under `hosts`, or null for any other key. */
  hostOf: (key: string) => string | null;
  seenOf: (key: string) => string | null;
  /** Every fleet limit's waiters: what a host's limits watch. */
  limits: string;
  /** The line of one fleet limit key (encoded: a key may hold `/`). */
  waiters: (limitKey: string) => string;
  waiter: (limitKey: string, host: string, ref: string) => string;
  /** The limit key of a waiter key, or null for any other key. */
  limitOf: (key: string) => string | null;
}

export function fleetKeys(fleet: string): FleetKeys {
  const base = `${ETCD_PREFIX}/fleet/${fleet}/`;
  const hosts = `${base}hosts/`;
  const seen = `${base}seen/`;
  const under = (prefix: string) => (key: string) => (key.startsWith(prefix) && key.length > prefix.length ? key.slice(prefix.length) : null);
  const limits = `${base}limits/`;
  const waiters = (k: string) => `${limits}${encodeURIComponent(k)}/waiters/`;
  const limitOf = (key: string) => {
    const rest = under(limits)(key);
    const end = rest?.indexOf('/waiters/') ?? -1;
    return rest === null || end <= 0 ? null : decodeURIComponent(rest.slice(0, end));
  };
  return {
    fleet: base,
    secret: `${base}secret`,
    hosts,
    seen,
    host: (h) => hosts + h,
    seenHost: (h) => seen + h,
    hostOf: under(hosts),
    seenOf: under(seen),
    limits,
    waiters,
    waiter: (k, h, ref) => `${waiters(k)}${h}/${ref}`,
    limitOf,
  };
}

/**
 * The value of `seen/<host>`: not bound to a lease, so a host that crashed is still known as gone.
 * `left_at` is written by the host on a clean stop, or by the first other host that sees its lease expire.
 */
export interface SeenRecord {
  host: string;
  url: string;
  joined_at: string;
  left_at?: string;
}

export function isSeenRecord(v: unknown): v is SeenRecord {
  return isObject(v) && isString(v.host) && isString(v.url) && isString(v.joined_at) && (v.left_at === undefined || isString(v.left_at));
}

/** A value another host wrote, parsed as data: null unless it is JSON of the shape `accept` checks. */
export function parseValue<T>(value: string, accept: (v: unknown) => v is T): T | null {
  try {
    const v: unknown = JSON.parse(value);
    return accept(v) ? v : null;
  } catch {
    return null;
  }
}
