// rq-mgr's part in a fleet: nothing without a `fleet` in config.json (etcd3 is not even loaded), else the fleet service, told which queues serve here.
import type { Logger } from 'pino';
import { fleetSettings } from '../config/fleet-config.js';
import type { GlobalConfig } from '../config/global-config.js';
import { RqError } from '../errors.js';
import type { FleetView } from '../ipc/fleet-reply.js';
import type { FleetService } from '../fleet/fleet-service.js';
import type { FleetSlots } from '../fleet/fleet-limits.js';

export class FleetMember {
  private readonly serving = new Set<string>();

  private constructor(private readonly service: FleetService | null) {}

  static async start(config: GlobalConfig, root: string, log: Logger, startedAt: number): Promise<FleetMember> {
    if (!config.fleet) return new FleetMember(null);
    const { FleetService } = await import('../fleet/fleet-service.js');
    return new FleetMember(await FleetService.start({ root, settings: fleetSettings(config.fleet), log, startedAt }));
  }

  /** A queue process answers (its first start, or after a restart). */
  queueServing(name: string): void {
    if (!this.service || this.serving.has(name)) return;
    this.serving.add(name);
    this.service.queues([...this.serving]);
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

  /** Leaves the fleet before the queues stop, so no host picks this one meanwhile. */
  async stop(): Promise<void> {
    await this.service?.stop();
  }
}
