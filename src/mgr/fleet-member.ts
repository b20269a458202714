// rq-mgr's part in a fleet: nothing without a `fleet` in config.json (etcd3 is not even loaded), else the fleet service, told which queues serve here.
import type { Logger } from 'pino';
import { fleetSettings } from '../config/fleet-config.js';
import type { GlobalConfig } from '../config/global-config.js';
import type { EtcdCredentials } from '../config/fleet-credentials.js';
import { RqError } from '../errors.js';
import { FLEET_PEER_USER, type FleetView, type PeerCredential } from '../ipc/fleet-reply.js';
import type { FleetService } from '../fleet/fleet-service.js';
import type { FleetSlots } from '../fleet/fleet-limits.js';
import { queuePaths } from '../config/paths.js';
import { QueueClient } from '../ipc/queue-client.js';
import { RELAY_QUEUE } from '../message/fleet-dest.js';

export class FleetMember {
  private readonly serving = new Set<string>();

  private constructor(
    private readonly service: FleetService | null,
    private readonly root: string,
    private readonly log: Logger,
  ) {}

  static async start(config: GlobalConfig, root: string, log: Logger, startedAt: number, credentials?: EtcdCredentials): Promise<FleetMember> {
    if (!config.fleet) return new FleetMember(null, root, log);
    const { FleetService } = await import('../fleet/fleet-service.js');
    // Set once the member exists: the view's first read may come before.
    let member: FleetMember | null = null;
    const poolOpened = (queue: string) => void member?.wakePool(queue);
    member = new FleetMember(await FleetService.start({ root, settings: fleetSettings(config.fleet), credentials, log, startedAt, poolOpened }), root, log);
    return member;
  }

  /**
   * A host takes pool `queue` again: the relay queue's messages for `fleet:<queue>` waiting out their
   * back-off go now, not at their next attempt (up to an hour away). Without a relay queue serving
   * here, nothing waits.
   */
  private async wakePool(queue: string): Promise<void> {
    const log = this.log;
    if (!this.serving.has(RELAY_QUEUE)) return;
    const a = await QueueClient.oneShot(queuePaths(this.root, RELAY_QUEUE).sock, { timeoutMs: 5000 })
      .wakePool(queue)
      .catch((err: Error) => ({ ok: false as const, text: err.message }));
    if (!a.ok) log.warn({ queue, err: a.text }, 'fleet: the relay queue did not take the word that a pool host is back; its messages go at their next attempt');
    else if (a.value > 0) log.info({ queue, messages: a.value }, 'fleet: a host takes the pool again; its waiting messages go now');
  }

  /** A queue process answers (its first start, or after a restart). */
  queueServing(name: string): void {
    if (!this.service || this.serving.has(name)) return;
    this.serving.add(name);
    this.service.queues([...this.serving]);
    // A relay queue that was not serving when a pool opened learns of it now.
    if (name === RELAY_QUEUE) for (const q of this.service.openPools()) void this.wakePool(q);
  }

  /** The web serves, or its process ended (a restart follows): its queues read DOWN to the fleet meanwhile. */
  web(serves: boolean): void {
    this.service?.web(serves);
  }

  /** A queue stopped for good (deleted, removed from scandir, or in ERROR). */
  queueGone(name: string): void {
    if (!this.service || !this.serving.delete(name)) return;
    this.service.queues([...this.serving]);
  }

  /** Where the arbiter keeps its fleet-scoped keys; null without a fleet. */
  slots(): FleetSlots | null {
    return this.service?.limits ?? null;
  }

  /** The `fleet` command's answer; refused with RQ_ERR_NO_FLEET on a host without a fleet. */
  view(): FleetView {
    if (!this.service) throw RqError.of('RQ_ERR_NO_FLEET');
    return this.service.view();
  }

  /** The credentials this host's requests to the others carry (`fleet_credential`): refused without a fleet, or before a join read the secret. */
  credential(): PeerCredential {
    if (!this.service) throw RqError.of('RQ_ERR_NO_FLEET');
    const password = this.service.peerSecret();
    if (password === null) throw RqError.of('RQ_ERR_FLEET_NO_SECRET');
    return { user: FLEET_PEER_USER, password };
  }

  /** `fleet_forget`: a gone host's record removed from the fleet; refused without a fleet. */
  async forget(host: string): Promise<void> {
    if (!this.service) throw RqError.of('RQ_ERR_NO_FLEET');
    await this.service.forget(host);
  }

  /** Leaves the fleet before the queues stop, so no host picks this one meanwhile. */
  async stop(): Promise<void> {
    await this.service?.stop();
  }
}
