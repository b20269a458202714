// The fleet as this host sees it, kept in memory from a watch of the fleet's keys: hosts that are up, and hosts that left with since when.
import type { Logger } from 'pino';
import { Doubling } from '../backoff.js';
import type { FleetHost, HostRecord, MemberState, FleetView as FleetViewReply } from '../ipc/fleet-reply.js';
import type { EtcdStore, KeyValue } from './etcd-client.js';
import type { FleetKeys, SeenRecord } from './fleet-keys.js';
import { trustedHostRecord, trustedSeenRecord } from './record-shapes.js';

/** A put or a delete the watch brought, at its revision. */
interface WatchEvent {
  revision: bigint;
  /** The key's new value; absent for a delete. */
  kv?: KeyValue;
  key: string;
}

/** The record of a host up, when `value` is one of `host` in the shape rq writes. */
function upRecord(value: string, host: string): HostRecord | null {
  const rec = trustedHostRecord(value);
  return rec?.host === host ? rec : null;
}

export interface FleetViewDeps {
  store: EtcdStore;
  keys: FleetKeys;
  fleet: string;
  /** This host's name: its own departure is recorded by its own stop. */
  host: string;
  log: Logger;
  now?: () => number;
  /** Called after each change of the hosts as seen (a record put, a key gone, a read afresh). */
  changed?: () => void;
  /** The fleet's secret as etcd holds it, at every read and change (fleet-secret.ts). */
  secret?: (value: string) => void;
}

export class FleetView {
  private readonly up = new Map<string, HostRecord>();
  private readonly seen = new Map<string, { record: SeenRecord; modRevision: string }>();
  /** When this host saw a host's key go, for one whose `seen` record has no left_at yet. */
  private readonly goneAt = new Map<string, number>();
  private reachable = false;
  private watch: { cancel: () => Promise<void> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Reads or watches that failed since the last read that held. */
  private failures = 0;
  private readonly waits = new Doubling({ baseMs: 250, maxMs: 5000 });
  private readonly now: () => number;
  /** Reads afresh in flight. */
  private reading = 0;
  /** The watch's events while a read is in flight, and how many of them the last answer laid has taken in. */
  private heard: WatchEvent[] = [];
  private laid = 0;
  /** The revision of the last read applied: an event at or before it is in that read already. */
  private applied = -1n;

  constructor(private readonly d: FleetViewDeps) {
    this.now = d.now ?? Date.now;
  }

  /** Watches, then reads what is there; retried in the background while etcd does not answer. */
  start(): void {
    void this.open();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.watch?.cancel().catch(() => undefined);
  }

  view(member: MemberState, endpoints: string[]): FleetViewReply {
    return { fleet: this.d.fleet, host: this.d.host, member, etcd: { endpoints, reachable: this.reachable }, hosts: this.hosts() };
  }

  /** Every host seen, up or gone, by name. */
  hosts(): FleetHost[] {
    return [...new Set([...this.up.keys(), ...this.seen.keys()])].sort().map((h) => this.host(h));
  }

  private host(name: string): FleetHost {
    const rec = this.up.get(name);
    const seen = this.seen.get(name)?.record;
    if (rec) {
      return {
        host: name,
        state: 'up',
        url: rec.url,
        since: seen?.joined_at ?? rec.started_at,
        version: rec.version,
        started_at: rec.started_at,
        queues: rec.queues,
      };
    }
    const at = seen?.left_at ?? (this.goneAt.has(name) ? new Date(this.goneAt.get(name)!).toISOString() : null);
    return { host: name, state: 'gone', url: seen?.url ?? '', since: at, queues: {} };
  }

  private async open(): Promise<void> {
    this.timer = null;
    if (this.closed) return;
    try {
      // The watch first: nothing that changes during the read is missed.
      const watch =
        this.watch ??
        (await this.d.store.watchPrefix(this.d.keys.fleet, {
          put: (kv) => this.heardEvent({ revision: BigInt(kv.modRevision), kv, key: kv.key }),
          delete: (key, rev) => this.heardEvent({ revision: BigInt(rev), key }),
          connected: (fresh) => {
            // A new watch: etcd's revisions may have started over, and the next read is taken whatever its revision.
            if (fresh) this.applied = -1n;
            void this.reload().catch((err: Error) => this.again(err));
          },
          disconnected: () => (this.reachable = false),
        }));
      // A close while the watch was being made did not see it: it is cancelled here.
      if (this.closed) return void (await watch.cancel().catch(() => undefined));
      this.watch = watch;
      await this.reload();
    } catch (err) {
      this.again(err as Error);
    }
  }

  /**
   * The watch or the read failed: both tried again (the watch kept if it holds), since a read that
   * failed leaves out what was there before the watch. Said at warn once it failed three times running.
   */
  private again(err: Error): void {
    if (this.closed || this.timer) return;
    this.failures++;
    const level = this.failures === 3 ? 'warn' : 'debug';
    this.d.log[level]({ err: err.message, failures: this.failures }, 'fleet view: cannot read the fleet from etcd; trying again');
    this.timer = setTimeout(() => void this.open(), this.waits.next());
  }

  /**
   * A watch event: held while a read is in flight (whether it is older than the answer is known
   * only then), else applied unless the last read applied holds it already (a resumed watch brings
   * what it missed after the read made at its reconnection).
   */
  private heardEvent(e: WatchEvent): void {
    if (this.reading > 0) this.heard.push(e);
    else this.apply(e);
  }

  private apply(e: WatchEvent): void {
    if (e.revision <= this.applied) return;
    if (e.kv) this.put(e.kv);
    else this.deleted(e.key);
    this.d.changed?.();
  }

  /**
   * Everything read afresh (after a reconnection, events may have been compacted away): hosts no
   * longer there are gone from now. What the watch brought after the read's revision is laid over
   * it, so a host that joined or left while the answer was on its way is not undone by it; an answer
   * older than the read applied last (two reads in flight, answered out of order) is dropped.
   */
  private async reload(): Promise<void> {
    this.reading++;
    try {
      const { kvs, revision } = await this.d.store.readPrefix(this.d.keys.fleet);
      const at = BigInt(revision);
      if (this.closed) return;
      if (at > this.applied) this.lay(kvs, at);
      this.reachable = true;
      this.failures = 0;
      this.waits.reset();
    } finally {
      // Once no read is left, the events no answer took in are applied as they came (those it did are in the view).
      if (--this.reading === 0) {
        const rest = this.heard.splice(0).slice(this.laid);
        this.laid = 0;
        if (!this.closed) for (const e of rest) this.apply(e);
      }
    }
    this.d.changed?.();
  }

  /** The read's keys at revision `at`, then the events held since that are newer, each key at its last value; a host gone from them has left. */
  private lay(kvs: KeyValue[], at: bigint): void {
    const k = this.d.keys;
    const last = new Map<string, KeyValue | null>(kvs.map((kv) => [kv.key, kv]));
    // Those at or before `at` are in the read. All stay held: a newer answer still to come lays them again.
    for (const e of this.heard) if (e.revision > at) last.set(e.key, e.kv ?? null);
    this.laid = this.heard.length;
    const wasUp = new Set(this.up.keys());
    // A host the read found up whose key a later event deleted: a departure seen here.
    for (const kv of kvs) {
      const host = k.hostOf(kv.key);
      if (host !== null && last.get(kv.key) === null && upRecord(kv.value, host)) wasUp.add(host);
    }
    this.up.clear();
    this.seen.clear();
    for (const kv of last.values()) if (kv) this.put(kv);
    this.applied = at;
    for (const h of wasUp) if (!this.up.has(h)) this.left(h);
  }

  private put(kv: KeyValue): void {
    const k = this.d.keys;
    if (kv.key === k.secret) return this.d.secret?.(kv.value);
    const host = k.hostOf(kv.key);
    const seenHost = k.seenOf(kv.key);
    if (host !== null) {
      const rec = upRecord(kv.value, host);
      if (rec) {
        this.up.set(host, rec);
        this.goneAt.delete(host);
      } else this.d.log.debug({ key: kv.key }, 'fleet view: a host key of an unknown shape; ignored');
    } else if (seenHost !== null) {
      const rec = trustedSeenRecord(kv.value);
      if (rec?.host === seenHost) this.seen.set(seenHost, { record: rec, modRevision: kv.modRevision });
    }
  }

  private deleted(key: string): void {
    const k = this.d.keys;
    const host = k.hostOf(key);
    if (host !== null && this.up.delete(host)) this.left(host);
    const seenHost = k.seenOf(key);
    if (seenHost !== null) {
      this.seen.delete(seenHost);
      // Forgotten: nothing of it is listed any more.
      if (!this.up.has(seenHost)) this.goneAt.delete(seenHost);
    }
  }

  /**
   * A host's key went: a clean stop has written left_at before; an expired lease has not, and the
   * first host to see it writes it, only if the record is unchanged since (the host may be back).
   */
  private left(host: string): void {
    this.goneAt.set(host, this.now());
    const s = this.seen.get(host);
    if (host === this.d.host || !s || s.record.left_at) return;
    const left = JSON.stringify({ ...s.record, left_at: new Date(this.now()).toISOString() });
    void this.d.store.replaceIf(this.d.keys.seenHost(host), left, s.modRevision).catch(() => undefined);
    this.d.log.warn({ host, url: s.record.url }, 'fleet: a host dropped out (its lease expired)');
  }
}
