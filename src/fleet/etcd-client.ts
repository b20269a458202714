// The one connection to etcd (the etcd3 package, loaded on first use so a host without a fleet never loads it): leases, create-if-absent, watches.
import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import { RqError } from '../errors.js';
import { backoffDelay } from '../backoff.js';
import { Failover } from './failover.js';
import { memberBreaker } from './etcd-breaker.js';
import { Reasons } from './etcd-reasons.js';
import { type FleetLease, type LeaseEvents, keepLease } from './etcd-lease.js';
import type { EtcdCredentials } from '../config/fleet-credentials.js';

/** One key as read back: its value and the revisions a transaction compares. */
export interface KeyValue {
  key: string;
  value: string;
  modRevision: string;
  /** The lease it is bound to ('0' for none). */
  lease: string;
}

export interface WatchEvents {
  put: (kv: KeyValue) => void;
  /** `modRevision` is the deletion's revision. */
  delete: (key: string, modRevision: string) => void;
  /**
   * The watch is (again) connected: events in between were resumed from its last revision, or
   * (`fresh`, a new watch from etcd's revision now) are to be read afresh, and revisions may have
   * started over (etcd lost its data, or was restored from a backup).
   */
  connected: (fresh: boolean) => void;
  /** The watch has not connected again for the failover time. */
  disconnected: (why: string) => void;
}

export interface EtcdOptions {
  endpoints: string[];
  /** A unary call (put, get, transaction) that takes longer fails: etcd is taken as unreachable. */
  callTimeoutMs?: number;
  /** The longest wait between a watch's reconnection attempts. */
  watchRetryMaxMs?: number;
  /**
   * How long a stream may go unanswered (a lease's keep-alive past its due time, a watch not connected
   * again) before etcd is reported unreachable: a member of a cluster that fails is not etcd failing.
   */
  failoverMs?: number;
  /** TLS (a CA, a client certificate) and an etcd user, as config.json's fleet block names them (fleet-credentials.ts). */
  credentials?: EtcdCredentials;
}

const CALL_TIMEOUT_MS = 3000;
const WATCH_RETRY = { baseMs: 100, maxMs: 2000 };
const KEEPALIVE_PING = { everyMs: 10_000, timeoutMs: 5_000 };
/** Half of the default lease TTL: a failover takes one or two of etcd's election timeouts (1 s by default). */
const FAILOVER_MS = 5000;

const text = (b: Buffer | string): string => (typeof b === 'string' ? b : b.toString('utf8'));
const keyValue = (kv: IKeyValue): KeyValue => ({ key: text(kv.key), value: text(kv.value), modRevision: String(kv.mod_revision), lease: String(kv.lease) });

/** etcd's failure as a catalogue error naming the endpoints; `why` is its reason as said (Reasons.why). */
export function unreachable(endpoints: readonly string[], err: unknown, why: string = (err as Error)?.message ?? String(err)): RqError {
  return RqError.of('RQ_ERR_ETCD_UNREACHABLE', endpoints.join(','), why).causedBy(err);
}

/** etcd3's watch back-off interface, on rq's one backoff: doubles from 100 ms to the cap, so a watch resumes soon after etcd is back. */
function watchBackoff(maxMs: number, n = 0): { duration: number; next: () => ReturnType<typeof watchBackoff> } {
  return { duration: backoffDelay(n, { baseMs: WATCH_RETRY.baseMs, maxMs }), next: () => watchBackoff(maxMs, n + 1) };
}

export class EtcdStore {
  private constructor(
    private readonly client: Etcd3,
    readonly endpoints: string[],
    private readonly failoverMs: number,
    private readonly timeoutMs: number,
    private readonly reasons: Reasons,
  ) {}

  /** Makes the client; nothing is sent until the first call, so an etcd that is down is found by the caller's first call. */
  static async open(opts: EtcdOptions): Promise<EtcdStore> {
    const [{ Etcd3, isRecoverableError }, cockatiel] = await Promise.all([import('etcd3'), import('cockatiel')]);
    const timeout = opts.callTimeoutMs ?? CALL_TIMEOUT_MS;
    const { tls, auth } = opts.credentials ?? {};
    const client = new Etcd3({
      hosts: opts.endpoints,
      // Without a CA, grpc-js verifies etcd against the system's CAs (its null; etcd3's type asks for a Buffer). Without `credentials`, an https
      // endpoint is verified that way too, with no client certificate.
      ...(tls && { credentials: { rootCertificate: tls.ca ?? (null as unknown as Buffer), privateKey: tls.key, certChain: tls.cert } }),
      // etcd3 exchanges the password for a token at the first call (under the deadline below), and again when etcd says it expired.
      ...(auth && { auth: { username: auth.user, password: auth.password } }),
      // Streams (keep-alives, watches) live on; a unary call has a deadline, or a lost etcd would hold it forever.
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
      // A connection that goes silent without closing (a hung member, a path that drops packets) is given up within 5 to 15 s of unanswered
      // pings, so streams on it move to a member that answers; etcd refuses pings sent more often than every 5 s.
      grpcOptions: { 'grpc.keepalive_time_ms': KEEPALIVE_PING.everyMs, 'grpc.keepalive_timeout_ms': KEEPALIVE_PING.timeoutMs },
      faultHandling: {
        host: () => memberBreaker(cockatiel, isRecoverableError),
        watchBackoff: watchBackoff(opts.watchRetryMaxMs ?? WATCH_RETRY.maxMs),
      },
    });
    return new EtcdStore(client, opts.endpoints, opts.failoverMs ?? FAILOVER_MS, timeout, new Reasons(isRecoverableError));
  }

  /** A call's answer, or etcd unreachable; twice grpc's deadline also bounds what etcd3 does around it (a token exchange, a lease's grant), so a join never hangs. */
  private async call<T>(p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const ms = 2 * this.timeoutMs;
    const bound = new Promise<never>(
      (_, no) => (timer = setTimeout(() => no(RqError.of('RQ_ERR_ETCD_UNREACHABLE', this.endpoints.join(','), `no answer in ${ms} ms`)), ms)),
    );
    try {
      return await Promise.race([p, bound]);
    } catch (err) {
      throw err instanceof RqError && err.code === 'RQ_ERR_ETCD_UNREACHABLE' ? err : unreachable(this.endpoints, err, this.reasons.why(err));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Grants a lease of `ttlS` seconds, kept alive until revoked, released or lost (etcd-lease.ts). */
  grant(ttlS: number, events: LeaseEvents): Promise<FleetLease> {
    return keepLease(this.client.lease(ttlS), ttlS, events, { failoverMs: this.failoverMs, reasons: this.reasons, call: (p) => this.call(p) });
  }

  /** Puts `key` (bound to `lease`, if given) if no such key exists; else leaves it and returns what is there. */
  async createOrGet(key: string, value: string, lease?: FleetLease): Promise<{ created: true } | { created: false; existing: KeyValue | null }> {
    const put = this.client.put(key).value(value);
    if (lease) put.lease(lease.id);
    const res = await this.call(this.client.if(key, 'Create', '==', 0).then(put).else(this.client.get(key)).commit());
    if (res.succeeded) return { created: true };
    const kv = res.responses[0]?.response_range?.kvs?.[0];
    return { created: false, existing: kv ? keyValue(kv) : null };
  }

  /** Puts `key` bound to `lease` only if it is still at `modRevision`: true when it was. */
  async replaceIf(key: string, value: string, modRevision: string, lease?: FleetLease): Promise<boolean> {
    const put = this.client.put(key).value(value);
    if (lease) put.lease(lease.id);
    const res = await this.call(this.client.if(key, 'Mod', '==', modRevision).then(put).commit());
    return res.succeeded;
  }

  async put(key: string, value: string, lease?: FleetLease): Promise<void> {
    const put = this.client.put(key).value(value);
    if (lease) put.lease(lease.id);
    await this.call(put.exec());
  }

  async getPrefix(prefix: string): Promise<KeyValue[]> {
    return (await this.readPrefix(prefix)).kvs;
  }

  /** The keys under `prefix` and the store's revision they were read at: a watch's events after it are newer than the read. */
  async readPrefix(prefix: string): Promise<{ kvs: KeyValue[]; revision: string }> {
    const res = await this.call(this.client.getAll().prefix(prefix).exec());
    return { kvs: (res.kvs ?? []).map(keyValue), revision: String(res.header.revision) };
  }

  async delete(key: string): Promise<void> {
    await this.call(this.client.delete().key(key).exec());
  }

  /** Deletes `key` unless `unless` exists, in one transaction: `held` when it does, else whether `key` was there. */
  async deleteUnless(key: string, unless: string): Promise<'deleted' | 'absent' | 'held'> {
    const res = await this.call(this.client.if(unless, 'Create', '==', 0).then(this.client.delete().key(key)).commit());
    if (!res.succeeded) return 'held';
    return Number(res.responses[0]?.response_delete_range?.deleted ?? 0) > 0 ? 'deleted' : 'absent';
  }

  /** The first `n` keys under `prefix` by create revision: the holders of a semaphore whose waiters are those keys. */
  async firstCreated(prefix: string, n: number): Promise<string[]> {
    return this.call(this.client.getAll().prefix(prefix).sort('Create', 'Ascend').limit(n).keys());
  }

  /**
   * Watches every key under `prefix`; the watch reconnects by itself (with a back-off to 2 s, on
   * whichever member answers) until cancelled, resuming from its last revision. A disconnection is
   * said once the watch has not connected again for the failover time.
   *
   * A watch etcd cancels is dropped by etcd3 for good (its only `error`): an invalid auth token, as
   * when etcd restarted and forgot the one etcd3 still holds, which etcd3 exchanges again only when a
   * unary call is refused with it. So a unary call first, then a new watch (whose `connected` has the
   * caller read afresh), again with the back-off until one holds.
   */
  async watchPrefix(prefix: string, events: WatchEvents): Promise<{ cancel: () => Promise<void> }> {
    const failover = new Failover(this.failoverMs, events.disconnected);
    let since: number | null = null;
    const down = (err: Error) => failover.failing(this.reasons.why(err), (since ??= Date.now()));
    let live: Watcher | null = null;
    let closed = false;
    let retry: NodeJS.Timeout | null = null;
    let attempt = 0;
    const connected = (fresh: boolean) => {
      since = null;
      attempt = 0;
      failover.answered();
      events.connected(fresh);
    };
    // Each watch on a stream of its own (a namespace of no prefix: etcd3 has one watch stream per namespace): etcd3 leaves a cancelled
    // watch at the head of its stream's queue of watches to create, and no other watch on that stream would be created again.
    const open = async (): Promise<Watcher> => {
      const watcher: Watcher = await this.call(this.client.namespace('').watch().prefix(prefix).create());
      live = watcher;
      /** The revision the watch resumes from after a disconnection: one past the last it saw. */
      let resumeAt: string | null = null;
      // etcd3 resumes a watch on a member it chooses again, and waits there for good if that member hangs (its connection never
      // ready, no ping or deadline ends it): a watch not connected again within the failover time is made anew, on a member chosen afresh.
      let stuck: NodeJS.Timeout | null = null;
      const unstuck = () => {
        if (stuck) clearTimeout(stuck);
        stuck = null;
      };
      watcher.on('put', (kv) => events.put(keyValue(kv)));
      watcher.on('delete', (kv) => events.delete(text(kv.key), String(kv.mod_revision)));
      watcher.on('connected', (res: IWatchResponse) => {
        // etcd answering below where the watch resumes lost its data (or was restored from a backup): the watch
        // would wait for revisions that are not coming. A new one starts from etcd's revision now.
        unstuck();
        if (resumeAt !== null && BigInt(res.header.revision) + 1n < BigInt(resumeAt)) return void replace(watcher);
        connected(false);
      });
      watcher.on('disconnected', (err: Error) => {
        const last = watcher.lastRevision();
        resumeAt = last === null ? null : String(last);
        down(err);
        stuck ??= setTimeout(() => (unstuck(), replace(watcher)), this.failoverMs).unref();
      });
      watcher.on('error', (err) => {
        unstuck();
        if (live !== watcher) return;
        live = null;
        down(err);
        again();
      });
      return watcher;
    };
    // The new watch's first `connected` came before its listeners: said here.
    const reopen = () =>
      this.call(this.client.get(prefix).exec())
        .then(open)
        .then((w) => (closed ? void w.cancel() : connected(true)));
    const again = (): void => {
      const wait = backoffDelay(attempt++, WATCH_RETRY);
      retry = setTimeout(() => {
        retry = null;
        if (!closed) reopen().catch((err: Error) => (down(err), again()));
      }, wait);
    };
    const replace = (stale: Watcher): void => {
      if (live !== stale) return;
      live = null;
      void stale.cancel().catch(() => undefined);
      if (!closed) reopen().catch((err: Error) => (down(err), again()));
    };
    await open();
    return {
      cancel: async () => {
        closed = true;
        failover.close();
        if (retry) clearTimeout(retry);
        const w = live;
        live = null;
        // etcd3 waits for etcd to confirm the cancel, without end: a hung etcd would hold rq-mgr's stop.
        if (w) await this.call(w.cancel());
      },
    };
  }

  close(): void {
    this.client.close();
  }
}
