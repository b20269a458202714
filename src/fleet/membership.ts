// This host's key in etcd: granted a lease, claimed if no other host holds the name, put again when the queues change (bursts coalesced), rejoined after etcd comes back.
import type { Logger } from 'pino';
import type { FleetSettings } from '../config/fleet-config.js';
import { Doubling } from '../backoff.js';
import { RqError } from '../errors.js';
import type { HostRecord, MemberState } from '../ipc/fleet-reply.js';
import type { EtcdStore } from './etcd-client.js';
import type { FleetLease } from './etcd-lease.js';
import type { FleetKeys, SeenRecord } from './fleet-keys.js';
import { trustedHostRecord } from './record-shapes.js';

export interface MembershipDeps {
  store: EtcdStore;
  settings: FleetSettings;
  keys: FleetKeys;
  /** This host's record as it is now (its queues' figures read at the moment of the put). */
  record: () => HostRecord;
  log: Logger;
  /** Told each new lease once this host's key is under it, and null when it is lost: the fleet limits' keys are bound to it. */
  leased?: (lease: FleetLease | null) => void;
  now?: () => number;
  /** At most one put per this many ms: a burst of queue changes is one put. */
  putGapMs?: number;
}

const PUT_GAP_MS = 200;

export class Membership {
  private st: MemberState;
  private lease: FleetLease | null = null;
  /** Each join's number: what an old lease reports after a new join is not heard. */
  private generation = 0;
  private joinedAt = '';
  private retryTimer: NodeJS.Timeout | null = null;
  private putTimer: NodeJS.Timeout | null = null;
  private putting = false;
  private dirty = false;
  private lastValue = '';
  private lastPut = 0;
  /** etcd's loss was said at warn for this outage; the next is said once it has ended. */
  private warned = false;
  /** The holder of this host's name last said at error (said again only for another holder). */
  private refusalSaid = '';
  private stopped = false;
  private readonly waits: Doubling;
  private readonly now: () => number;

  constructor(private readonly d: MembershipDeps) {
    this.now = d.now ?? Date.now;
    this.st = { state: 'joining', since: this.iso() };
    // A refused or cut-off host tries again at least every half lease: the name is free a TTL after its holder died.
    this.waits = new Doubling({ baseMs: 250, maxMs: Math.max(1000, (d.settings.leaseTtlS * 1000) / 2) });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private get key(): string {
    return this.d.keys.host(this.d.settings.host);
  }

  state(): MemberState {
    return this.st;
  }

  start(): void {
    void this.join();
  }

  /** The queues changed: the record is put within the put gap, once for a burst. */
  changed(): void {
    this.dirty = true;
    if (!this.lease || this.st.state !== 'member' || this.putTimer || this.putting) return;
    this.putTimer = setTimeout(() => void this.flush(), Math.max(0, this.lastPut + (this.d.putGapMs ?? PUT_GAP_MS) - this.now()));
  }

  /** A clean stop: `left_at` recorded, the lease revoked (the key goes at once, not a TTL later). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.generation++;
    for (const t of [this.retryTimer, this.putTimer]) if (t) clearTimeout(t);
    const lease = this.lease;
    this.lease = null;
    this.d.leased?.(null);
    if (lease) {
      try {
        await this.d.store.put(this.d.keys.seenHost(this.d.settings.host), this.seen(this.iso()));
        await lease.revoke();
      } catch (err) {
        lease.release();
        this.d.log.warn({ err: (err as Error).message }, 'fleet: the lease could not be revoked; the host drops out when it expires');
      }
    }
    this.enter('left');
  }

  private enter(state: MemberState['state'], reason?: string): void {
    if (this.st.state === state && this.st.reason === reason) return;
    // A new reason in the same state (etcd's text changes along an outage) keeps its since: how long the state has lasted.
    const since = this.st.state === state ? this.st.since : this.iso();
    this.st = { state, since, ...(reason ? { reason } : {}) };
  }

  private seen(leftAt?: string): string {
    const s = this.d.settings;
    const rec: SeenRecord = { host: s.host, url: s.advertise, joined_at: this.joinedAt, ...(leftAt ? { left_at: leftAt } : {}) };
    return JSON.stringify(rec);
  }

  private async join(): Promise<void> {
    this.retryTimer = null;
    if (this.stopped) return;
    const gen = ++this.generation;
    const mine = () => gen === this.generation && !this.stopped;
    let lease: FleetLease | null = null;
    try {
      lease = await this.d.store.grant(this.d.settings.leaseTtlS, {
        failing: (why) => mine() && this.unreachable(why),
        alive: () => mine() && this.alive(),
        lost: (why) => mine() && this.lost(why),
      });
      const value = JSON.stringify(this.d.record());
      if (!(await this.claim(value, lease))) {
        lease.revoke().catch(() => lease?.release());
        return this.later();
      }
      if (!mine()) return void lease.revoke().catch(() => undefined);
      this.lease = lease;
      this.lastValue = value;
      this.lastPut = this.now();
      this.joinedAt = this.iso();
      await this.d.store.put(this.d.keys.seenHost(this.d.settings.host), this.seen());
      this.d.leased?.(lease);
      this.member();
    } catch (err) {
      if (!mine()) return;
      lease?.release();
      this.lease = null;
      this.unreachable((err as Error).message);
      this.later();
    }
  }

  /** Create-if-absent; a key this host's own earlier run left (a crash, an etcd outage) is taken over, another host's refused. */
  private async claim(value: string, lease: FleetLease): Promise<boolean> {
    const r = await this.d.store.createOrGet(this.key, value, lease);
    if (r.created) return true;
    const held = r.existing ? trustedHostRecord(r.existing.value) : null;
    if (r.existing && held?.instance === this.d.record().instance) return this.d.store.replaceIf(this.key, value, r.existing.modRevision, lease);
    const s = this.d.settings;
    const err = RqError.of('RQ_ERR_FLEET_HOST_TAKEN', s.name, s.host, held?.url ?? 'a value rq does not read', held?.started_at ?? 'an unknown time');
    this.enter('refused', err.message);
    if (this.refusalSaid !== (held?.instance ?? '?')) this.d.log.error({ code: err.code, key: this.key }, err.message);
    this.refusalSaid = held?.instance ?? '?';
    return false;
  }

  private member(): void {
    const back = this.warned || this.st.state === 'refused';
    this.enter('member');
    this.waits.reset();
    this.warned = false;
    this.refusalSaid = '';
    const s = this.d.settings;
    this.d.log.info({ fleet: s.name, host: s.host, url: s.advertise, lease_ttl_s: s.leaseTtlS }, back ? 'fleet: joined again' : 'fleet: joined');
    if (this.dirty) this.changed();
  }

  /** etcd did not answer: the host runs on; said once per outage. */
  private unreachable(why: string): void {
    if (this.st.state === 'refused' || this.stopped) return;
    this.enter('unreachable', why);
    if (this.warned) return;
    this.warned = true;
    this.d.log.warn({ etcd: this.d.settings.etcd, err: why }, 'fleet: etcd does not answer; this host runs its queues on and rejoins when etcd is back');
  }

  /** A keep-alive went through after failures: the lease held, the record is put again. */
  private alive(): void {
    if (this.st.state !== 'unreachable' || !this.lease) return;
    this.member();
    this.dirty = true;
    this.changed();
  }

  private lost(why: string): void {
    this.lease = null;
    this.d.leased?.(null);
    // Once per outage: the next lease is granted by the rejoin, which a lost etcd fails without a lease to lose.
    this.d.log.info({ err: why }, 'fleet: lease lost; a new one is granted when etcd answers');
    this.unreachable(`lease lost: ${why}`);
    this.later();
  }

  private later(): void {
    if (this.stopped || this.retryTimer) return;
    this.retryTimer = setTimeout(() => void this.join(), this.waits.next());
  }

  private async flush(): Promise<void> {
    this.putTimer = null;
    const lease = this.lease;
    if (!lease) return;
    this.dirty = false;
    const value = JSON.stringify(this.d.record());
    if (value === this.lastValue) return;
    this.putting = true;
    try {
      await this.d.store.put(this.key, value, lease);
      this.lastValue = value;
      this.lastPut = this.now();
    } catch (err) {
      // Put again once a keep-alive goes through (alive), or by the rejoin after the lease is lost.
      this.dirty = true;
      this.unreachable((err as Error).message);
    } finally {
      this.putting = false;
    }
    if (this.dirty && this.st.state === 'member') this.changed();
  }
}
