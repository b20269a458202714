// This host's places in the fleet's concurrency limits: one lease-bound etcd key per waiting or holding run; the holders are the first N keys by create revision (etcd's semaphore recipe).
import type { Logger } from 'pino';
import { Doubling } from '../backoff.js';
import { isRqError } from '../errors.js';
import type { EtcdStore } from './etcd-client.js';
import type { FleetLease } from './etcd-lease.js';
import type { FleetKeys } from './fleet-keys.js';

/** One fleet key as rq-mgr's arbiter has it: its slots, its waiters in line order, the runs of this host holding a slot. */
export interface FleetLine {
  concurrency: number;
  waiting: readonly string[];
  holders: readonly string[];
}

/** What the arbiter needs of the fleet: its lines kept in etcd, grants heard, and why none comes now. */
export interface FleetSlots {
  sync(key: string, line: FleetLine): void;
  /** `granted(key, ref)`: `ref` is among the key's holders in etcd; false when it no longer waits here. */
  attach(granted: (key: string, ref: string) => boolean): void;
  /** Why this host can take no fleet slot now (etcd does not answer, no lease), or null. */
  stalled(): string | null;
  /** Slots of `key` other hosts hold, as etcd said at this host's last look (it looks while runs of it wait); null when it has not. */
  heldElsewhere(key: string): number | null;
}

interface Entry {
  ref: string;
  etcdKey: string;
  held: boolean;
  /** The lease its key was put with; null until put (again, after a new lease). */
  lease: string | null;
}

export interface FleetLimitsDeps {
  store: EtcdStore;
  keys: FleetKeys;
  host: string;
  log: Logger;
}

const NO_LEASE = 'this host holds no lease in etcd now (it is not a member of the fleet)';

/** etcd's failure as said: a text that names etcd already (the client's `etcd did not answer (<url>): …`) is not wrapped in a second one. */
const unanswered = (why: string): string => (why.startsWith('etcd ') ? why : `etcd does not answer (${why})`);

export class FleetLimits implements FleetSlots {
  private readonly lines = new Map<string, { concurrency: number; entries: Map<string, Entry> }>();
  /** Keys of runs that left the line: deleted before anything is put, so a ref that comes back gets a new place. */
  private readonly toDelete = new Set<string>();
  private lease: FleetLease | null = null;
  /** The lease whose predecessors' keys of this host were deleted. */
  private cleaned: string | null = null;
  private problem: string | null = null;
  /** The outage was said at warn; said once more when it ends. */
  private warned = false;
  private watch: { cancel: () => Promise<void> } | null = null;
  private busy = false;
  private again = false;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private readonly waits = new Doubling({ baseMs: 100, maxMs: 2000 });
  private granted: (key: string, ref: string) => boolean = () => false;
  /** heldElsewhere's figures, per key this host waits on. */
  private readonly elsewhere = new Map<string, number>();

  constructor(private readonly d: FleetLimitsDeps) {}

  attach(granted: (key: string, ref: string) => boolean): void {
    this.granted = granted;
  }

  heldElsewhere(key: string): number | null {
    // What etcd said before an outage is no figure of now.
    return this.stalled() === null ? (this.elsewhere.get(key) ?? null) : null;
  }

  stalled(): string | null {
    return this.problem ?? (this.lease ? null : NO_LEASE);
  }

  /** Membership's lease: a new one has every line put again under it; none (lost) stops every grant until the next. */
  leased(lease: FleetLease | null): void {
    this.lease = lease;
    if (lease) void this.pass();
  }

  sync(key: string, line: FleetLine): void {
    const want = new Set([...line.waiting, ...line.holders]);
    let l = this.lines.get(key);
    for (const [ref, e] of l?.entries ?? []) {
      if (want.has(ref)) continue;
      l!.entries.delete(ref);
      this.toDelete.add(e.etcdKey);
    }
    if (want.size === 0) {
      this.lines.delete(key);
      this.elsewhere.delete(key);
    } else {
      if (!l) this.lines.set(key, (l = { concurrency: line.concurrency, entries: new Map() }));
      l.concurrency = line.concurrency;
      for (const ref of line.waiting)
        if (!l.entries.has(ref)) l.entries.set(ref, { ref, etcdKey: this.d.keys.waiter(key, this.d.host, ref), held: false, lease: null });
    }
    void this.pass();
  }

  /** One pass at a time over every line; whatever asks meanwhile runs one more. A failure is retried on a back-off. */
  private async pass(): Promise<void> {
    if (this.closed) return;
    if (this.busy) return void (this.again = true);
    this.busy = true;
    try {
      let reached = false;
      do {
        this.again = false;
        reached = (await this.step()) || reached;
      } while (this.again && !this.closed);
      // Only an answer says etcd answers: a pass with nothing to ask (no lease, every place held) says nothing.
      if (reached) this.answered();
    } catch (err) {
      // The client's own refusal says it already, naming the endpoints (`etcd did not answer (<url>): …`).
      this.failed(isRqError(err, 'RQ_ERR_ETCD_UNREACHABLE') ? err.message : unanswered((err as Error).message));
    } finally {
      this.busy = false;
    }
  }

  /** One go over the lines: whether etcd answered a call of it. With nothing to ask while an outage is on record, one small read asks. */
  private async step(): Promise<boolean> {
    const { store, keys } = this.d;
    let answered = false;
    const ask = async <T>(call: Promise<T>): Promise<T> => {
      const value = await call;
      answered = true;
      return value;
    };
    for (const k of [...this.toDelete]) {
      await ask(store.delete(k));
      this.toDelete.delete(k);
    }
    if (this.lease) await this.underLease(this.lease, ask);
    if (!answered && this.problem !== null) await ask(store.firstCreated(keys.limits, 1));
    return answered;
  }

  /** This host's lines put under `lease`, and the places etcd gives them taken. */
  private async underLease(lease: FleetLease, ask: <T>(call: Promise<T>) => Promise<T>): Promise<void> {
    const { store, keys } = this.d;
    this.watch ??= await store.watchPrefix(keys.limits, {
      put: (kv) => this.heard(kv.key),
      delete: (key) => this.heard(key),
      connected: () => void this.pass(),
      disconnected: (why) => this.failed(unanswered(why)),
    });
    if (this.cleaned !== lease.id) await ask(this.clean(lease));
    for (const [key, line] of this.lines)
      for (const e of line.entries.values()) {
        if (e.lease === lease.id) continue;
        await ask(store.put(e.etcdKey, JSON.stringify({ host: this.d.host, ref: e.ref, key }), lease));
        e.lease = lease.id;
      }
    for (const [key, line] of this.lines) {
      if (![...line.entries.values()].some((e) => !e.held)) {
        this.elsewhere.delete(key);
        continue;
      }
      const first = new Set(await ask(store.firstCreated(keys.waiters(key), line.concurrency)));
      // Only what etcd said under the lease still held: a lease lost meanwhile took these keys with it.
      if (this.lease !== lease) return;
      // The first `concurrency` keys hold the slots: those not of this host's runs are held elsewhere.
      const mine = new Set([...line.entries.values()].map((e) => e.etcdKey));
      this.elsewhere.set(key, [...first].filter((k) => !mine.has(k)).length);
      for (const e of line.entries.values()) {
        if (e.held || e.lease !== lease.id || !first.has(e.etcdKey)) continue;
        e.held = true;
        if (this.granted(key, e.ref)) continue;
        // It left the line here while etcd answered: its place goes.
        line.entries.delete(e.ref);
        this.toDelete.add(e.etcdKey);
        this.again = true;
      }
    }
  }

  /** This host's keys left by an earlier lease (an rq-mgr that crashed, a lease that expired) hold places no run of now holds. */
  private async clean(lease: FleetLease): Promise<void> {
    const mine = `/waiters/${this.d.host}/`;
    for (const kv of await this.d.store.getPrefix(this.d.keys.limits)) if (kv.key.includes(mine) && kv.lease !== lease.id) await this.d.store.delete(kv.key);
    this.cleaned = lease.id;
  }

  /** A line changed in etcd: another pass, for a key this host waits on. */
  private heard(etcdKey: string): void {
    const key = this.d.keys.limitOf(etcdKey);
    const line = key === null ? undefined : this.lines.get(key);
    if (line && [...line.entries.values()].some((e) => !e.held)) void this.pass();
  }

  private answered(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.waits.reset();
    this.problem = null;
    if (!this.warned) return;
    this.warned = false;
    this.d.log.info('fleet limits: etcd answers again; runs waiting for fleet slots are served again');
  }

  /** etcd did not answer (`problem` says so, and why): nothing is granted until a pass goes through; said once per outage. */
  private failed(problem: string): void {
    if (this.closed) return;
    this.problem = problem;
    if (!this.retry) {
      const ms = this.waits.next();
      this.d.log.debug({ err: problem, retry_ms: ms }, 'fleet limits: etcd does not answer; trying again');
      this.retry = setTimeout(() => ((this.retry = null), void this.pass()), ms);
    }
    if (this.warned || this.lines.size === 0) return;
    this.warned = true;
    this.d.log.warn({ err: problem }, 'fleet limits: etcd does not answer; no run needing a fleet slot starts on this host until it is back');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.watch?.cancel().catch(() => undefined);
  }
}
