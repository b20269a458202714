// The table of named slots shared by every queue (rq-beyond §B12.2): holders and FIFO waiters per key, in rq-mgr's one thread.
import type { Logger } from 'pino';
import { RqError } from '../errors.js';
import type { LimitKeyStatus } from '../ipc/mgr-client.js';
import { EMPTY_LIMITS, type LimitsTable, configuredConcurrency, configuredScope } from '../config/limits-config.js';
import type { FleetSlots } from '../fleet/fleet-limits.js';
import { type Waiter, parkInOrder } from './waiter-line.js';

export type AcquireReply = ['granted'] | ['wait', number];

interface Holder {
  queue: string;
  since: number;
  grantedAt: number;
  /** Its queue process died: counted until its scripts are known dead (limit_reset). */
  orphaned: boolean;
}

interface KeyState {
  concurrency: number;
  source: 'config' | 'message';
  /** The template's glob the key was expanded from, as its first waiter said (reported only). */
  pattern?: string;
  holders: Map<string, Holder>;
  waiting: Waiter[];
  /** Its slots are the fleet's (`"scope": "fleet"` when the key came into use): granted from etcd's line, not by counting here. */
  fleet: boolean;
}

export interface ArbiterDeps {
  now: () => number;
  /**
   * Tells `queue` that its waiter `msgId` holds a slot of `key`: true when it took it, false when it
   * refused (no longer waiting), null when it did not answer.
   */
  grant: (queue: string, msgId: string, key: string) => Promise<boolean | null>;
  log: Logger;
  /** The first moments after a start, when acquires only park, so that queues restarted with rq-mgr register first. */
  settleMs: number;
  /** How long settling waits at most for a queue that has not reported (one that does not come up). */
  settleMaxMs?: number;
  /** The fleet's lines in etcd, for fleet-scoped keys; absent without a fleet. */
  fleet?: FleetSlots;
}

/** A ref is `<queue>/<msg_id>`. */
function msgIdOf(ref: string): string {
  return ref.slice(ref.indexOf('/') + 1);
}

export class LimitArbiter {
  private table: LimitsTable = EMPTY_LIMITS;
  private readonly keys = new Map<string, KeyState>();
  private seq = 0;
  private settling: boolean;
  private readonly timers: NodeJS.Timeout[];
  private minElapsed = false;
  /** Queues rq-mgr started with it that have not reported yet (limit_reset): settling lasts until none is left. */
  private readonly unreported = new Set<string>();

  constructor(private readonly d: ArbiterDeps) {
    this.settling = d.settleMs > 0;
    const min = setTimeout(() => {
      this.minElapsed = true;
      if (this.unreported.size === 0) this.settled();
    }, d.settleMs);
    const ceiling = setTimeout(() => this.settled(), d.settleMaxMs ?? d.settleMs);
    this.timers = [min, ceiling];
    for (const t of this.timers) t.unref();
    d.fleet?.attach((key, ref) => this.fleetGranted(key, ref));
  }

  /**
   * The queues started with rq-mgr: nothing is granted until each has reported its waiters (and
   * the settle time has passed), or the longest settle is over, for one that never comes up; so
   * arrival order holds across a restart even when a queue takes long to recover.
   */
  expect(queues: readonly string[]): void {
    for (const q of queues) this.unreported.add(q);
  }

  /** Settling is over: every line moves; `asking` are the waiters of the request that ended it (they learn from its reply). */
  private settled(asking?: ReadonlySet<string>): void {
    if (!this.settling) return;
    this.settling = false;
    for (const t of this.timers) clearTimeout(t);
    for (const key of [...this.keys.keys()]) this.promote(key, asking);
  }

  /** A new config/limits.json: config keys take its values; a raised concurrency promotes at once, a lowered one lets holders finish. */
  setConfig(table: LimitsTable): void {
    this.table = table;
    for (const [key, state] of this.keys) {
      const c = configuredConcurrency(table, key);
      if (c !== undefined) Object.assign(state, { concurrency: c, source: 'config' });
      else if (state.source === 'config') state.source = 'message';
      this.promote(key);
    }
  }

  /**
   * The concurrency of `key`: the file's, else the one known while the key is in use, else
   * `given`. Refuses a `given` that differs from a known one, and a key with none.
   */
  define(key: string, given?: number): { concurrency: number; source: 'config' | 'message' } {
    const configured = configuredConcurrency(this.table, key);
    const known = configured !== undefined ? { concurrency: configured, source: 'config' as const } : this.keys.get(key);
    if (known && given !== undefined && given !== known.concurrency) {
      const from = known.source === 'config' ? 'config/limits.json' : 'limit_concurrency of a message using it';
      throw RqError.of('RQ_ERR_LIMIT_CONFLICT', JSON.stringify(key), known.concurrency, from, given);
    }
    if (known) return { concurrency: known.concurrency, source: known.source };
    if (given === undefined) throw RqError.of('RQ_ERR_LIMIT_NO_CONCURRENCY', JSON.stringify(key));
    return { concurrency: given, source: 'message' };
  }

  /** Parks `ref` among the key's waiters, then promotes: granted now, or its 1-based place in line. */
  acquire(key: string, ref: string, since: number, given?: number, pattern?: string): AcquireReply {
    this.enlist(key, ref, since, given, pattern);
    this.promote(key, new Set([ref]));
    return this.answerFor(key, ref);
  }

  private enlist(key: string, ref: string, since: number, given?: number, pattern?: string): void {
    // The file wins over a message's own value: it may have changed since the message was made.
    const { concurrency, source } = this.define(key, configuredConcurrency(this.table, key) === undefined ? given : undefined);
    let state = this.keys.get(key);
    const fleet = this.d.fleet !== undefined && configuredScope(this.table, key) === 'fleet';
    if (!state) this.keys.set(key, (state = { concurrency, source, holders: new Map(), waiting: [], fleet }));
    state.pattern ??= pattern;
    if (!state.holders.has(ref) && !state.waiting.some((w) => w.ref === ref))
      parkInOrder(state.waiting, { ref, queue: ref.slice(0, ref.indexOf('/')), since, seq: this.seq++ });
  }

  private answerFor(key: string, ref: string): AcquireReply {
    const state = this.keys.get(key);
    if (!state || state.holders.has(ref)) return ['granted'];
    return ['wait', state.waiting.findIndex((w) => w.ref === ref) + 1];
  }

  /**
   * limit_reset from a queue process, after its recovery killed what an earlier one left: the
   * orphaned slots of `queue` are freed and its waiters `acquires` join the lines in one step, so
   * its older messages keep their place (§B12.5). The answers are those of each acquire; one refused is its catalogue error.
   */
  reset(
    queue: string,
    acquires: readonly { key: string; holder: string; since: number; concurrency?: number; pattern?: string }[] = [],
  ): { freed: number; results: Record<string, AcquireReply | RqError> } {
    let freed = 0;
    const touched = new Set<string>();
    for (const [key, state] of this.keys) {
      for (const [ref, h] of state.holders) {
        if (h.queue !== queue || !h.orphaned) continue;
        state.holders.delete(ref);
        touched.add(key);
        freed++;
      }
    }
    const results: Record<string, AcquireReply | RqError> = {};
    for (const a of acquires) {
      try {
        this.enlist(a.key, a.holder, a.since, a.concurrency, a.pattern);
        touched.add(a.key);
      } catch (err) {
        results[a.holder] = err instanceof RqError ? err : RqError.of('RQ_ERR_INTERNAL', (err as Error).message);
      }
    }
    this.unreported.delete(queue);
    const asking = new Set(acquires.map((a) => a.holder));
    if (this.settling && this.minElapsed && this.unreported.size === 0) this.settled(asking);
    for (const key of touched) this.promote(key, asking);
    for (const a of acquires) results[a.holder] ??= this.answerFor(a.key, a.holder);
    return { freed, results };
  }

  /** Gives a slot back, or withdraws a waiter; promotes. Idempotent. */
  release(key: string, ref: string): void {
    const state = this.keys.get(key);
    if (!state) return;
    state.holders.delete(ref);
    state.waiting = state.waiting.filter((w) => w.ref !== ref);
    this.promote(key);
  }

  /** The supervisor saw `queue` exit: its waiters go, its holders stay counted as orphans. */
  queueDied(queue: string): void {
    for (const [key, state] of this.keys) {
      state.waiting = state.waiting.filter((w) => w.queue !== queue);
      for (const h of state.holders.values()) if (h.queue === queue) h.orphaned = true;
      this.promote(key);
    }
  }

  /** etcd's line has `ref` among the key's first holders: it holds the slot here too, and its queue is told. False when it no longer waits. */
  private fleetGranted(key: string, ref: string): boolean {
    const state = this.keys.get(key);
    const at = state?.waiting.findIndex((w) => w.ref === ref) ?? -1;
    if (!state || at < 0 || this.settling) return false;
    const [w] = state.waiting.splice(at, 1);
    state.holders.set(ref, { queue: w.queue, since: w.since, grantedAt: this.d.now(), orphaned: false });
    void this.tell(key, w);
    return true;
  }

  /** `queue` stopped cleanly, or rq-mgr killed what it left: every slot it held is free. The number freed. */
  freeQueue(queue: string): number {
    let freed = 0;
    for (const [key, state] of [...this.keys]) {
      state.waiting = state.waiting.filter((w) => w.queue !== queue);
      for (const [ref, h] of state.holders) {
        if (h.queue !== queue) continue;
        state.holders.delete(ref);
        freed++;
      }
      this.promote(key);
    }
    return freed;
  }

  /** Queues with a holder granted before `before` (epoch ms), for the reconciliation sweep. */
  queuesHoldingSince(before: number): string[] {
    const out = new Set<string>();
    for (const state of this.keys.values()) for (const h of state.holders.values()) if (!h.orphaned && h.grantedAt < before) out.add(h.queue);
    return [...out];
  }

  /** The sweep's answer from `queue`: holders granted before `before` that it does not report are released. */
  reconcile(queue: string, held: readonly string[], before: number): number {
    const reported = new Set(held.map((id) => `${queue}/${id}`));
    let released = 0;
    for (const [key, state] of [...this.keys]) {
      for (const [ref, h] of state.holders) {
        if (h.queue !== queue || h.orphaned || h.grantedAt >= before || reported.has(ref)) continue;
        state.holders.delete(ref);
        released++;
        this.d.log.warn({ key, holder: ref }, 'limit slot held by a message its queue no longer runs; released');
      }
      this.promote(key);
    }
    return released;
  }

  status(only?: string): Record<string, LimitKeyStatus> {
    const out: Record<string, LimitKeyStatus> = {};
    for (const [key, s] of this.keys) {
      if (only !== undefined && key !== only) continue;
      out[key] = {
        concurrency: s.concurrency,
        source: s.source,
        ...(s.pattern === undefined ? {} : { pattern: s.pattern }),
        holders: [...s.holders].map(([ref, h]) => ({
          ref,
          queue: h.queue,
          since: h.since,
          granted_at: h.grantedAt,
          ...(h.orphaned ? { orphaned: true as const } : {}),
        })),
        waiting: s.waiting.map((w, i) => ({ ref: w.ref, queue: w.queue, since: w.since, position: i + 1 })),
        ...(s.fleet ? { scope: 'fleet' as const, stalled: this.d.fleet?.stalled() ?? null, held_elsewhere: this.d.fleet?.heldElsewhere(key) ?? null } : {}),
      };
    }
    return out;
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
  }

  /**
   * Hands free slots to the first waiters; the `asking` ones learn it from the reply they are
   * waiting for, every other one is told by its queue. Nothing moves while settling.
   */
  private promote(key: string, asking: ReadonlySet<string> = new Set()): void {
    const state = this.keys.get(key);
    if (!state) return;
    // A fleet key's grants come from etcd (fleetGranted); here its line is only kept in step.
    if (state.fleet && !this.settling) this.d.fleet?.sync(key, { ...state, waiting: state.waiting.map((w) => w.ref), holders: [...state.holders.keys()] });
    while (!state.fleet && !this.settling && state.holders.size < state.concurrency && state.waiting.length) {
      const w = state.waiting.shift()!;
      state.holders.set(w.ref, { queue: w.queue, since: w.since, grantedAt: this.d.now(), orphaned: false });
      if (!asking.has(w.ref)) void this.tell(key, w);
    }
    this.forgetIfIdle(key);
  }

  /** A queue that refuses the grant gives the slot back; one that does not answer keeps it until the sweep asks. */
  private async tell(key: string, w: Waiter): Promise<void> {
    const took = await this.d.grant(w.queue, msgIdOf(w.ref), key).catch(() => null);
    if (took === false) this.release(key, w.ref);
    if (took === null) this.d.log.warn({ key, holder: w.ref }, 'queue did not answer limit_granted; the slot stays held until the sweep asks');
  }

  /** A key with neither holders nor waiters is forgotten, and with it a concurrency a message gave. */
  private forgetIfIdle(key: string): void {
    const s = this.keys.get(key);
    if (s && s.holders.size === 0 && s.waiting.length === 0) this.keys.delete(key);
  }
}
