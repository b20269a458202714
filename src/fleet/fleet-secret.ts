// The password the hosts of a fleet give each other's web (HTTP Basic as user `rq-fleet`): made once by the first host that joins, kept in etcd, read by every host as it joins.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { EtcdStore } from './etcd-client.js';

/** A secret as rq makes it: 32 random bytes, base64url. One read from etcd that is not of this shape is not used. */
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;

export class FleetSecret {
  private value: string | null = null;

  constructor(
    private readonly store: EtcdStore,
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  /** The secret, once a join read it. */
  get(): string | null {
    return this.value;
  }

  /**
   * Reads the fleet's secret, making it if no host has (create-if-absent, so two hosts joining at
   * once agree on one). Called at each join; a failure leaves the last one read and is said.
   */
  async load(): Promise<void> {
    try {
      const made = randomBytes(32).toString('base64url');
      const r = await this.store.createOrGet(this.key, made);
      const value = r.created ? made : (r.existing?.value ?? '');
      if (!SECRET_RE.test(value)) {
        this.log.error(
          { key: this.key },
          'fleet: the secret in etcd is not one rq made; hosts of this fleet cannot be let in by each other until it is deleted (a host makes a new one as it joins)',
        );
        return;
      }
      if (r.created) this.log.info({ key: this.key }, 'fleet: made the secret the hosts of this fleet give each other');
      this.value = value;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'fleet: the secret the hosts give each other could not be read; it is read again at the next join');
    }
  }
}
