// The password the hosts of a fleet give each other's web (HTTP Basic as user `rq-fleet`): made once by the first host that joins, kept in etcd, and followed by every host (a change is taken at once).
import type { Logger } from 'pino';
import { randomBytes } from '../lazy-builtins.js';
import type { EtcdStore } from './etcd-client.js';

/** A secret as rq makes it: 32 random bytes, base64url. A value of another shape is not used. */
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;
const SHAPE = '43 characters of A-Z a-z 0-9 _ - (32 random bytes, base64url)';
/** A failed read at a join is tried again this long after. */
const RETRY_MS = 5000;

export class FleetSecret {
  private value: string | null = null;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: EtcdStore,
    private readonly key: string,
    private readonly log: Logger,
  ) {}

  /** The secret, once read. */
  get(): string | null {
    return this.value;
  }

  /** The value etcd holds now (a join's read, the fleet view's read or watch): taken if it is of rq's shape, else said and ignored. */
  take(value: string): void {
    if (!SECRET_RE.test(value)) {
      this.log.error(
        { key: this.key, expected: SHAPE },
        'fleet: the secret in etcd is not of the shape rq makes; this host keeps the one it had. Put one of that shape there, or delete it (the next host to join makes one)',
      );
      return;
    }
    if (this.value !== null && this.value !== value) this.log.info({ key: this.key }, 'fleet: the secret changed in etcd; this host uses the new one');
    this.value = value;
  }

  /**
   * Reads the fleet's secret as this host joins, making it if no host has (create-if-absent, so two
   * hosts joining at once agree on one). A failure is said and tried again; the fleet view's reads
   * and watch bring any later change.
   */
  async load(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    try {
      const made = randomBytes(32).toString('base64url');
      const r = await this.store.createOrGet(this.key, made);
      if (r.created) this.log.info({ key: this.key }, 'fleet: made the secret the hosts of this fleet give each other');
      if (r.created || r.existing) this.take(r.created ? made : r.existing!.value);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, `fleet: the secret the hosts give each other could not be read; trying again in ${RETRY_MS / 1000} s`);
      this.retry = setTimeout(() => void this.load(), RETRY_MS).unref();
    }
  }

  close(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }
}
