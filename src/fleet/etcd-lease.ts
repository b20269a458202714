// A granted lease kept alive: etcd3's keep-alives, said failing when one is late, and sent again on a stream of their own when one goes unanswered.
import type { Lease } from 'etcd3';
import { Failover } from './failover.js';
import type { Reasons } from './etcd-reasons.js';

/** A granted lease: keys put with it go when it is revoked or expires. */
export interface FleetLease {
  readonly id: string;
  /** Ends keep-alives and deletes the lease's keys at once. */
  revoke(): Promise<void>;
  /** Ends keep-alives only: the lease expires on its own. */
  release(): void;
}

export interface LeaseEvents {
  /** Keep-alives have failed for the failover time past one's due time: etcd does not answer (the lease holds until its TTL). */
  failing: (why: string) => void;
  /** A keep-alive went through again. */
  alive: () => void;
  /** The lease is gone (expired, revoked elsewhere, or not renewed within twice its TTL). */
  lost: (why: string) => void;
}

export interface LeaseDeps {
  failoverMs: number;
  reasons: Reasons;
  /** A call to etcd under the bound every call has. */
  call: <T>(p: Promise<T>) => Promise<T>;
}

/** Renewals sent and still open at most: those that went to a hung member wait there until its connection is given up. */
const MAX_UNANSWERED = 8;

/** Whether `p` was fulfilled within `ms`. */
function answeredWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(r, ms, false)));
  return Promise.race([
    p.then(
      () => true,
      () => false,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

/**
 * Grants etcd3's `lease` of `ttlS` seconds and keeps it alive until revoked, released or lost. A
 * keep-alive goes every third of the TTL (etcd3's, as etcd's own client) on one stream to one member;
 * a failure is said once the keep-alive due after the last answered one is the failover time late.
 * etcd3 gives that stream up only a whole TTL after its last answer, when etcd has just let the lease
 * expire: so a keep-alive not answered within a twelfth of the TTL is sent again on a stream of its
 * own, which goes to a member chosen afresh, and again until one is answered or the TTL is out. A
 * member that hangs in a cluster whose others answer then costs no lease.
 */
export async function keepLease(lease: Lease, ttlS: number, events: LeaseEvents, d: LeaseDeps): Promise<FleetLease> {
  const failover = new Failover(d.failoverMs, events.failing);
  const every = (ttlS * 1000) / 3;
  const renewMs = (ttlS * 1000) / 12;
  let answeredAt = Date.now();
  let failure: string | null = null;
  // etcd3 says `lost` for a grant that failed too: that failure is the grant's own, thrown below.
  let granted = false;
  let closed = false;
  /** Set from a keep-alive's renewal due until one is answered. */
  let overdue: NodeJS.Timeout | null = null;
  const answered = () => {
    answeredAt = Date.now();
    failure = null;
    if (overdue) clearTimeout(overdue);
    overdue = null;
    failover.answered();
    events.alive();
  };
  const close = () => {
    closed = true;
    failover.close();
    if (overdue) clearTimeout(overdue);
    overdue = null;
  };
  let unanswered = 0;
  const sent = (p: Promise<unknown>) => (unanswered++, p.finally(() => unanswered--));
  const renew = async () => {
    while (!closed && overdue !== null && Date.now() < answeredAt + ttlS * 1000) {
      const tried = Date.now();
      if (unanswered < MAX_UNANSWERED && (await answeredWithin(sent(lease.keepaliveOnce()), renewMs))) return void (closed || answered());
      await new Promise((r) => setTimeout(r, Math.max(0, tried + renewMs - Date.now())));
    }
    // Out of time unanswered (etcd3 says the lease lost) or answered on etcd3's own stream meanwhile: the next keep-alive may renew again.
    if (!closed) overdue = null;
  };
  // etcd3 gives up on a lease twice its TTL after the last answer with a text it garbles ("Lease We lost connection to etcd…
  // is expired or revoked"): said as what happened, the last keep-alive's failure with it.
  const lostWhy = (err: Error) =>
    /^Lease We lost connection/.test(err.message) ? `no keep-alive answered for over ${2 * ttlS} s (${failure ?? 'etcd did not answer'})` : d.reasons.why(err);
  lease.on('lost', (err) => (close(), granted && events.lost(lostWhy(err))));
  lease.on('keepaliveFailed', (err) => failover.failing((failure = d.reasons.why(err)), answeredAt + every));
  lease.on('keepaliveFired', () => {
    // A hung etcd breaks no stream and answers nothing: a keep-alive sent is failing until answered.
    failover.failing(failure ?? 'a keep-alive was not answered', answeredAt + every);
    if (granted && !closed) overdue ??= setTimeout(() => void renew(), renewMs);
  });
  lease.on('keepaliveSucceeded', answered);
  // A grant given up on is closed: granted late, its keep-alives would hold a lease nothing uses.
  const id = await d.call(lease.grant()).catch((err: unknown) => (close(), lease.release(), Promise.reject(err)));
  granted = true;
  return { id, revoke: () => (close(), d.call(lease.revoke())), release: () => (close(), lease.release()) };
}
