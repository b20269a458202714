// A host's part in a fleet, composed for rq-mgr: the etcd connection, this host's queues' figures, its membership key and its view of the others.
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from 'pino';
import { FLEET_NAME_EXPECTED, type FleetSettings, isFleetName } from '../config/fleet-config.js';
import { RqError, invalidField } from '../errors.js';
import type { EtcdCredentials } from '../config/fleet-credentials.js';
import { createHash } from '../lazy-builtins.js';
import type { FleetView as FleetViewReply, HostRecord, MemberState } from '../ipc/fleet-reply.js';
import { RQ_VERSION } from '../version.js';
import { EtcdStore } from './etcd-client.js';
import type { FleetLease } from './etcd-lease.js';
import { fleetKeys } from './fleet-keys.js';
import { FleetLimits } from './fleet-limits.js';
import { FleetView } from './fleet-view.js';
import { LocalQueues } from './local-queues.js';
import { Membership } from './membership.js';
import { PoolWatch } from './pool-watch.js';
import { FleetSecret } from './fleet-secret.js';

export interface FleetServiceDeps {
  root: string;
  settings: FleetSettings;
  /** The TLS files' and password's contents, read at rq-mgr's start. */
  credentials?: EtcdCredentials;
  log: Logger;
  /** When this rq-mgr started (epoch ms). */
  startedAt: number;
  /** A queue that no host of the fleet took work for has one now (pool-watch.ts). */
  poolOpened?: (queue: string) => void;
}

/** This machine and root: a later run of the same rq takes over the key an earlier one left; another host with the name is refused. */
function instanceOf(root: string): string {
  const real = fs.realpathSync(root);
  return createHash('sha256').update(`${os.hostname()}\0${real}`).digest('hex').slice(0, 16);
}

export class FleetService {
  private constructor(
    private readonly store: EtcdStore,
    private readonly local: LocalQueues,
    private readonly membership: Membership,
    private readonly others: FleetView,
    readonly limits: FleetLimits,
    readonly settings: FleetSettings,
    private readonly pools: PoolWatch,
    private readonly secret: FleetSecret,
  ) {}

  /** The password this host gives the others' web, and takes from them; null until a join read it. */
  peerSecret(): string | null {
    return this.secret.get();
  }

  /** The queues some host of the fleet takes work for now. */
  openPools(): string[] {
    return [...this.pools.opened];
  }

  /** Starts joining in the background: rq-mgr serves its queues whether or not etcd answers. */
  static async start(d: FleetServiceDeps): Promise<FleetService> {
    const log = d.log.child({ component: 'fleet' });
    const s = d.settings;
    // A failed member's streams have half a TTL to come back on another member: a keep-alive due a third of a TTL after the last
    // renewal is said failing five sixths of a TTL after it, while the lease still holds; a failover takes an election timeout or two.
    const store = await EtcdStore.open({ endpoints: s.etcd, failoverMs: (s.leaseTtlS * 1000) / 2, credentials: d.credentials });
    const keys = fleetKeys(s.name);
    const instance = instanceOf(d.root);
    const startedAt = new Date(d.startedAt).toISOString();
    let membership: Membership | null = null;
    const local = new LocalQueues({ root: d.root, log, changed: () => membership?.changed() });
    const record = (): HostRecord => ({ host: s.host, url: s.advertise, version: RQ_VERSION, started_at: startedAt, instance, queues: local.figures() });
    const limits = new FleetLimits({ store, keys, host: s.host, log });
    const secret = new FleetSecret(store, keys.secret, log);
    const leased = (lease: FleetLease | null) => {
      limits.leased(lease);
      if (lease) void secret.load();
    };
    membership = new Membership({ store, settings: s, keys, record, log, leased });
    const pools: PoolWatch = new PoolWatch(
      () => others.hosts(),
      (queue) => d.poolOpened?.(queue),
    );
    const others: FleetView = new FleetView({ store, keys, fleet: s.name, host: s.host, log, changed: () => pools.changed(), secret: (v) => secret.take(v) });
    membership.start();
    others.start();
    return new FleetService(store, local, membership, others, limits, s, pools, secret);
  }

  /** The queues that serve on this host now. */
  queues(names: readonly string[]): void {
    this.local.set(names);
  }

  /** This host's web serves (its port listens), or stopped serving: the others reach its queues only through it. */
  web(serves: boolean): void {
    this.local.web(serves);
  }

  member(): MemberState {
    return this.membership.state();
  }

  view(): FleetViewReply {
    return this.others.view(this.membership.state(), this.settings.etcd);
  }

  /**
   * Forgets a host gone for good: its `seen` record, which rq otherwise keeps so a crashed host shows
   * as gone. Refused for a host that is up (this one included), checked in the same transaction as
   * the delete, so a host joining meanwhile keeps its record; and for a name never seen.
   */
  async forget(host: string): Promise<void> {
    const { name } = this.settings;
    if (!isFleetName(host)) throw invalidField('host', FLEET_NAME_EXPECTED, host);
    if (host === this.settings.host) throw RqError.of('RQ_ERR_FLEET_HOST_UP', name, host);
    const keys = fleetKeys(name);
    const r = await this.store.deleteUnless(keys.seenHost(host), keys.host(host));
    if (r === 'held') throw RqError.of('RQ_ERR_FLEET_HOST_UP', name, host);
    if (r === 'absent') throw RqError.of('RQ_ERR_FLEET_HOST_UNKNOWN', name, host);
  }

  /** Leaves the fleet (the key goes at once) and closes the connection. */
  async stop(): Promise<void> {
    this.local.close();
    this.pools.close();
    this.secret.close();
    // Side by side: with etcd hung, each watch's cancel waits out a call's bound.
    await Promise.all([this.limits.close(), this.others.close()]);
    await this.membership.stop();
    this.store.close();
  }
}
