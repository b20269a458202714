// The fleet as rq-mgr's `fleet` command answers it (and /fleet.json, `rq fleet` show it): each host's record as etcd holds it, and this host's membership.
import { isArray, isNumber, isObject, isString } from './answer.js';

/** What another host needs to choose a queue of this one. */
export interface QueueFigures {
  /** UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL; DOWN too while the queue process does not answer. */
  status: string;
  /** Messages due now, waiting for a worker. */
  ready: number;
  running: number;
  /** The queue's worker slots (num_workers). */
  workers: number;
}

/** The value of `<prefix>/hosts/<host>`, bound to the host's lease. */
export interface HostRecord {
  host: string;
  /** The base URL other hosts reach this host's web at (fleet.advertise). */
  url: string;
  version: string;
  /** ISO time this rq-mgr started. */
  started_at: string;
  /** Tells this host's own later run (same machine, same root) from another host that took the same name. */
  instance: string;
  queues: Record<string, QueueFigures>;
}

/**
 * This host's membership: `joining` until its key is in etcd, `member` while it is, `unreachable`
 * while etcd does not answer (the host runs on), `refused` while another host holds its name.
 */
export interface MemberState {
  state: 'joining' | 'member' | 'unreachable' | 'refused' | 'left';
  /** ISO time of the last change of state. */
  since: string;
  reason?: string;
}

export interface FleetHost {
  host: string;
  /** `up` while its lease-bound key is in etcd; `gone` once it left (a clean stop) or its lease expired (a crash, a partition). */
  state: 'up' | 'gone';
  url: string;
  /** up: since it joined; gone: since it left, null when no host saw it go (every host was down then). */
  since: string | null;
  version?: string;
  started_at?: string;
  queues: Record<string, QueueFigures>;
}

/**
 * The hosts a host may trust as the fleet's now, to give the fleet's credentials: those up in it,
 * while etcd answers (a view kept through an outage may list a host that has since left).
 */
export function trustedHosts(view: FleetView): FleetHost[] {
  return view.etcd.reachable ? view.hosts.filter((h) => h.state === 'up') : [];
}

/**
 * Does `h` take work for `queue` now: up in the fleet, with the queue, and the queue UP. A DOWN,
 * PAUSEd, SCRIPTERROR or DISK FULL queue would only hold a message where it cannot run.
 */
export function takesWork(h: FleetHost, queue: string): boolean {
  return h.state === 'up' && h.queues[queue]?.status === 'UP';
}

/**
 * Why this host's view of the fleet may lack hosts that are there: its watch of etcd does not answer, said by its
 * membership (`this host is <state> since <time>: <reason>`); null while the view is read from etcd.
 */
export function blindness(view: FleetView): string | null {
  if (view.etcd.reachable) return null;
  const m = view.member;
  return m.state === 'member' ? 'etcd does not answer this host now' : `this host is ${m.state} since ${m.since}${m.reason ? `: ${m.reason}` : ''}`;
}

export interface FleetView {
  fleet: string;
  /** This host's name in the fleet. */
  host: string;
  member: MemberState;
  /** Whether this host's view is fresh: false while etcd does not answer (hosts as last seen). */
  etcd: { endpoints: string[]; reachable: boolean };
  hosts: FleetHost[];
}

const isFigures = (v: unknown): v is QueueFigures => isObject(v) && isString(v.status) && isNumber(v.ready) && isNumber(v.running) && isNumber(v.workers);
const isQueues = (v: unknown): v is Record<string, QueueFigures> => isObject(v) && Object.values(v).every(isFigures);

/** The user a fleet host's requests to another carry (HTTP Basic); its password is the fleet's secret, kept in etcd. */
export const FLEET_PEER_USER = 'rq-fleet';

/** rq-mgr's `fleet_credential` answer: what this host's requests to the others' web carry. */
export interface PeerCredential {
  user: string;
  password: string;
}

/** The Authorization header of a credential (HTTP Basic). */
export function basicAuthorization(c: PeerCredential): string {
  return `Basic ${Buffer.from(`${c.user}:${c.password}`).toString('base64')}`;
}

export function isPeerCredential(v: unknown): v is PeerCredential {
  return isObject(v) && isString(v.user) && isString(v.password);
}

/** A host record read back from etcd: data another host wrote, taken only in the expected shape. */
export function isHostRecord(v: unknown): v is HostRecord {
  return isObject(v) && isString(v.host) && isString(v.url) && isString(v.version) && isString(v.started_at) && isString(v.instance) && isQueues(v.queues);
}

const isHost = (v: unknown): v is FleetHost =>
  isObject(v) &&
  isString(v.host) &&
  (v.state === 'up' || v.state === 'gone') &&
  isString(v.url) &&
  (v.since === null || isString(v.since)) &&
  isQueues(v.queues);

export function isFleetView(v: unknown): v is FleetView {
  return (
    isObject(v) &&
    isString(v.fleet) &&
    isString(v.host) &&
    isObject(v.member) &&
    isString(v.member.state) &&
    isObject(v.etcd) &&
    isArray(v.hosts) &&
    v.hosts.every(isHost)
  );
}
