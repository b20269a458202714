// The dependent side of rq-beyond §B8 (queue A): a message waits off the que until its dependencies are resolved, by their queues' replies and notifications.
import type { Logger } from 'pino';
import { RqError, isRqError } from '../../errors.js';
import { type DependsFail, type RefContext, readDepends } from '../../message/depends.js';
import { isUrlRef } from '../../message/fleet-ref.js';
import type { Message } from '../../message/message.js';
import { type ResolvedLine, appendResolved, readResolved } from '../../spool/dependency-files.js';
import { mapLimit } from '../../spool/map-limit.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { Backoff, PEER_RETRY } from '../coordination/backoff.js';
import type { DependencyState } from './dependency-outbox.js';
import type { WaitMoves } from '../index/wait-moves.js';
import { backoffDelay } from '../../backoff.js';

export interface DependencyWaitsDeps {
  spool: QueueSpool;
  /** Parks and lets go of a waiting message (the transitions module). */
  moves: WaitMoves;
  log: Logger;
  /** `http://host:port/root/`: full ids of this host are accepted as refs. */
  hostUrl: string;
  queueExists: (name: string) => boolean;
  /** In a fleet: another host's full id in its one spelling (fleet-refs.ts), refused unless it names a message of a host of the fleet. */
  fleetRef?: (ref: string, field: string) => Promise<string>;
  /** Does message `ref` exist (`<queue>/<id>`, or another host's full id)? A text when its queue or host did not answer (the reason). */
  exists: (ref: string) => Promise<boolean | string>;
  /** add_dependent on the dependency's queue; rejects with `msg not found` or when nobody answers. */
  register: (ref: string, dependent: string) => Promise<DependencyState>;
  /** A dependency failed under policy `fail`: the message ends in err (outcome dependency_failed). */
  fail: (msg: Message, status: string) => Promise<void>;
  pump: () => void;
}

interface Waiting {
  msg: Message;
  awaiting: Set<string>;
  policy: DependsFail;
}

const LANES = 16;
const SUCCESS = new Set(['done', 'relayed']);
const FINISHED = new Set(['done', 'relayed', 'err', 'deleted']);

function split(ref: string): [string, string] {
  const i = ref.indexOf('/');
  return [ref.slice(0, i), ref.slice(i + 1)];
}

/** `<ref>=<state>[:<outcome>]`, as RQ_DEPENDS lists them. */
function doneText(l: Pick<ResolvedLine, 'state' | 'outcome'>): string {
  return l.outcome ? `${l.state}:${l.outcome}` : l.state;
}

export class DependencyWaits {
  private readonly waits = new Map<string, Waiting>();
  /** Registrations a queue did not answer are sent again: 1 s doubling to 60 s (§B8.2). */
  private readonly backoff = new Backoff();

  constructor(private readonly d: DependencyWaitsDeps) {}

  private get queue(): string {
    return this.d.spool.name;
  }

  /** How this queue reads refs: full ids of this host, bare ids of this queue. */
  get refContext(): RefContext {
    return { hostUrl: this.d.hostUrl, queue: this.queue, fleet: this.d.fleetRef !== undefined };
  }

  /** At create (§B8.2 step 1): every ref names an existing message of this host or of another host of its fleet; nothing is written otherwise. */
  async check(depends: readonly string[]): Promise<string[]> {
    const given = readDepends([...depends], this.refContext);
    const refs = await mapLimit(given, LANES, async (ref) => {
      const i = given.indexOf(ref);
      const r = isUrlRef(ref) && this.d.fleetRef ? await this.d.fleetRef(ref, `depends[${i}]`) : ref;
      const where = isUrlRef(r) ? 'its host' : `queue ${split(r)[0]}`;
      if (!isUrlRef(r) && !this.d.queueExists(split(r)[0])) throw RqError.of('RQ_ERR_BAD_DEPENDENCY', `depends[${i}]: ${where} does not exist`);
      const found = await this.d.exists(r);
      if (typeof found === 'string') throw RqError.of('RQ_ERR_BAD_DEPENDENCY', `depends[${i}]: ${where} could not be asked (${found})`);
      if (!found) throw RqError.of('RQ_ERR_BAD_DEPENDENCY', `depends[${i}]: no message ${r}`);
      return r;
    });
    return [...new Set(refs)];
  }

  /** Does `msg` wait on dependencies? Then it is parked off the que, and registrations are sent once it is durable. */
  admit(msg: Message, resolved: readonly ResolvedLine[] = []): boolean {
    const depends = Array.isArray(msg.depends) ? (msg.depends as string[]) : [];
    if (!depends.length) return false;
    const policy = (msg.depends_fail as DependsFail | undefined) ?? 'fail';
    const settled = new Set(resolved.filter((l) => SUCCESS.has(l.state) || (policy === 'run' && FINISHED.has(l.state))).map((l) => l.ref));
    msg.depends_done = Object.fromEntries(resolved.map((l) => [l.ref, doneText(l)]));
    const awaiting = new Set(depends.filter((r) => !settled.has(r)));
    if (!awaiting.size) return false;
    this.waits.set(msg.msg_id, { msg, awaiting, policy });
    this.d.moves.park(msg, 'depends');
    return true;
  }

  /** Recovery (§B8.5): a que message's waits are derived again from `depends` minus its `resolved` file. */
  async recover(msg: Message): Promise<boolean> {
    return this.admit(msg, await readResolved(this.d.spool.msgDir('que', msg.msg_id)));
  }

  /** Sends add_dependent for every awaited ref; the replies may resolve some at once. Unanswered ones are retried in the background. */
  async register(id: string): Promise<void> {
    const w = this.waits.get(id);
    if (!w) return;
    const dependent = `${this.queue}/${id}`;
    await mapLimit([...w.awaiting], LANES, (ref) => this.registerOne(id, ref, dependent, 0));
  }

  /** Registers `dependent` with `ref`; try `n` of a registration that was not answered waits backoffDelay(n) first. */
  private async registerOne(id: string, ref: string, dependent: string, n: number): Promise<void> {
    if (this.backoff.closed || !this.waits.get(id)?.awaiting.has(ref)) return;
    try {
      const s = await this.d.register(ref, dependent);
      if (FINISHED.has(s.state)) await this.resolve(id, ref, s.state, s.outcome);
    } catch (err) {
      if (isRqError(err, 'RQ_ERR_NO_SUCH_MSG')) return void (await this.resolve(id, ref, 'deleted'));
      // It will never tell this one, and has not ended: whatever depends_fail says, the message cannot go on.
      if (isRqError(err, 'RQ_ERR_TOO_MANY_DEPENDENTS')) return void (await this.refused(id, ref, (err as Error).message));
      this.d.log.warn({ msg_id: id, dependency: ref, err: (err as Error).message }, 'dependency registration not answered; asking again later');
      this.backoff.later(backoffDelay(n, PEER_RETRY), () => void this.registerOne(id, ref, dependent, n + 1));
    }
  }

  /**
   * dependency_resolved (or a registration's reply): records the end of `ref` in the message's
   * `resolved` file, durably, applies the policy, and lets the message go once nothing is awaited.
   */
  async resolve(id: string, ref: string, state: string, outcome?: string): Promise<'resolved' | 'ignored'> {
    const w = this.waits.get(id);
    if (!w || !w.awaiting.has(ref) || !FINISHED.has(state)) return 'ignored';
    const line: ResolvedLine = { ref, state, ...(outcome ? { outcome } : {}), at: new Date().toISOString() };
    await appendResolved(this.d.spool.msgDir('que', id), line, this.d.spool.dirSync);
    if (this.waits.get(id) !== w) return 'resolved';
    (w.msg.depends_done as Record<string, string>)[ref] = doneText(line);
    this.d.spool.appendHistory(this.d.spool.msgDir('que', id), { event: 'depends_resolved', ref, state, ...(outcome ? { outcome } : {}) });
    const failed = !SUCCESS.has(state);
    if (failed && w.policy === 'wait') return 'resolved';
    if (failed && w.policy === 'fail') {
      this.forget(id);
      this.d.moves.unpark(id);
      const why = state === 'deleted' ? 'no longer exists' : `is err (${outcome ?? 'failed'})`;
      await this.d.fail(w.msg, `DEPENDENCY FAILED - ${ref} ${why}`);
      return 'resolved';
    }
    w.awaiting.delete(ref);
    if (!w.awaiting.size) this.release(id, w);
    return 'resolved';
  }

  /** A dependency that refused this message as a dependent: it ends in err with the reason (a restart before that registers and is refused again). */
  private async refused(id: string, ref: string, why: string): Promise<void> {
    const w = this.waits.get(id);
    if (!w || !w.awaiting.has(ref)) return;
    this.forget(id);
    this.d.moves.unpark(id);
    await this.d.fail(w.msg, `DEPENDENCY REFUSED - ${why}`);
  }

  /** undepend (§B8.3): stops waiting for `refs` (all of them when null), durably in `depends`; the refs still awaited. */
  async undepend(id: string, refs: readonly string[] | null, actor: string): Promise<string[]> {
    const w = this.waits.get(id);
    if (!w) throw RqError.of('RQ_ERR_NOT_WAITING_DEPS');
    const drop = new Set(refs ?? w.awaiting);
    const depends = (w.msg.depends as string[]).filter((r) => !drop.has(r));
    const updated: Message = { ...w.msg, depends };
    if (!depends.length) delete updated.depends;
    await this.d.spool.writeMessage('que', id, updated);
    if (this.waits.get(id) !== w) return [];
    w.msg.depends = updated.depends;
    for (const r of drop) w.awaiting.delete(r);
    this.d.spool.appendHistory(this.d.spool.msgDir('que', id), { event: 'undepend', actor, refs: [...drop] });
    const left = [...w.awaiting];
    if (!left.length) this.release(id, w);
    return left;
  }

  /** get_message's `waiting` of a message waiting on dependencies. */
  waitingOf(id: string): { reason: 'dependencies'; waiting_on: string[] } | undefined {
    const w = this.waits.get(id);
    return w ? { reason: 'dependencies', waiting_on: [...w.awaiting] } : undefined;
  }

  waitingList(): { msg_id: string; reason: 'dependencies'; waiting_on: string[] }[] {
    return [...this.waits.entries()].map(([id, w]) => ({ msg_id: id, reason: 'dependencies' as const, waiting_on: [...w.awaiting] }));
  }

  /** The message was taken out of its wait (cancelled, deleted, expired): nothing is awaited for it any more. */
  forget(id: string): void {
    this.waits.delete(id);
  }

  private release(id: string, w: Waiting): void {
    this.forget(id);
    this.d.moves.release(w.msg);
    this.d.pump();
  }

  close(): void {
    this.backoff.close();
  }
}
