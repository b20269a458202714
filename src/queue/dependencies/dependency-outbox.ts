// The dependency side of rq-beyond §B8 (queue B): add_dependent, the outbox written before a finish, notifications sent once it is durable, replay at start.
import path from 'node:path';
import type { Logger } from 'pino';
import { RqError, isErrno } from '../../errors.js';
import { isUrlRef } from '../../message/fleet-ref.js';
import { FINISHED_STATES, type FinishedState, type State } from '../../message/states.js';
import { type OutboxEntry, Outbox, appendDependent, readDependents, readDependentsNow } from '../../spool/dependency-files.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { Backoff } from '../coordination/backoff.js';
import type { QueueEvents } from '../status/queue-events.js';

/** A dependent's answer to being told, or why there was none (it is told again later). */
export type Notified = 'resolved' | 'ignored' | { unanswered: string };

/** What a dependency's queue answers a registration: where the dependency is now. */
export interface DependencyState {
  state: State;
  outcome?: string;
}

export interface DependencyOutboxDeps {
  spool: QueueSpool;
  events: QueueEvents;
  log: Logger;
  /** Where a message is: memory, then disk; an acknowledged err one too. */
  locate: (id: string) => Promise<{ state: State; dir: string } | null>;
  /**
   * Tells a dependent (`<queue>/<id>`, or another host's full id) that `dependency` (`<queue>/<id>` of this
   * host) ended; its answer, or why it gave none.
   */
  notify: (dependent: string, payload: { dependency: string; state: string; outcome?: string }) => Promise<Notified>;
  /** Does queue `name` still exist on this host? Dependents of a deleted queue are not waited for. */
  queueExists: (name: string) => boolean;
  /** The most dependents one message takes (MAX_DEPENDENTS); more are refused. */
  maxDependents?: number;
}

/**
 * Each registration reads a message's dependents file whole, and its finish tells each one: a
 * bound keeps a message that everything waits on from costing its queue quadratic work (a fan-in
 * that large is better served by a message in between).
 */
export const MAX_DEPENDENTS = 10_000;

/** A registration tries again when a move took the message away between locating it and appending. */
const APPEND_TRIES = 3;
const FINISH_WAIT_MS = 10_000;

export class DependencyOutbox {
  private readonly outbox: Outbox;
  /** Messages between their outbox write and their finishing rename: a registration waits for it. */
  private readonly finishing = new Map<string, { entry: OutboxEntry; done: Promise<void>; end: () => void }>();
  /** Notifications nobody answered are sent again after 1 s, doubling to 60 s (§B8.4). */
  private readonly backoff = new Backoff();

  constructor(private readonly d: DependencyOutboxDeps) {
    this.outbox = new Outbox(path.join(d.spool.paths.dir, '.outbox'), d.spool.dirSync);
    d.events.on('moved', ({ id, to }) => this.finished(id, to));
    d.events.on('removed', ({ id }) => this.finished(id, 'deleted'));
  }

  private get queue(): string {
    return this.d.spool.name;
  }

  /**
   * The spool's hook before any finish or delete: a message with dependents gets its outbox entry,
   * durable, before the rename. Nearly every message has none, and pays one stat.
   */
  beforeFinish(id: string, from: State, to: FinishedState | 'deleted'): Promise<void> | undefined {
    const dependents = readDependentsNow(this.d.spool.msgDir(from, id));
    return dependents.length ? this.writeOutbox(id, from, to, dependents) : undefined;
  }

  private async writeOutbox(id: string, from: State, to: FinishedState | 'deleted', dependents: string[]): Promise<void> {
    // Deleting a message that had ended does not change how it ended: a dependent that has not heard
    // yet (its host down, say) must learn `done`, not a deletion that would fail it.
    const ended = to === 'deleted' && (FINISHED_STATES as readonly string[]).includes(from);
    const state = ended ? from : to;
    const msg = state === 'err' ? await this.d.spool.readMessage(from, id).catch(() => null) : null;
    const outcome = state === 'err' ? { outcome: String(msg?.outcome ?? 'failed') } : {};
    const entry: OutboxEntry = { id, state, ...outcome, dependents, done: [], ...(ended ? { deleted: true as const } : {}) };
    let end!: () => void;
    const done = new Promise<void>((r) => (end = r));
    this.finishing.set(id, { entry, done, end });
    try {
      await this.outbox.write(entry);
    } catch (err) {
      this.finishing.delete(id);
      end();
      throw err;
    }
  }

  /** The rename (or the removal) happened: once it is durable, the dependents are told. */
  private finished(id: string, to: State | 'deleted'): void {
    const f = this.finishing.get(id);
    if (!f) return;
    this.finishing.delete(id);
    f.end();
    if ((f.entry.deleted ? 'deleted' : f.entry.state) !== to) return;
    const stateDir = to === 'deleted' ? this.d.spool.paths.state.prep : path.dirname(this.d.spool.msgDir(to, id));
    void this.d.spool.dirSync.sync(stateDir).then(
      () => this.deliver(f.entry),
      (err: Error) => this.d.log.warn({ msg_id: id, err: err.message }, 'finish not synced; its dependents are told at the next start'),
    );
  }

  /**
   * add_dependent: registers `dependent` on message `id` unless it has succeeded already (§B8.3),
   * and answers where `id` is. A finish that began meanwhile is waited for, so the answer is its end
   * state and no notification can be missed between the two.
   */
  async addDependent(id: string, dependent: string): Promise<DependencyState> {
    for (let tries = 1; ; tries++) {
      await this.untilFinished(id);
      const where = await this.d.locate(id);
      if (!where) return this.endOfDeleted(id);
      if (where.state === 'done' || where.state === 'relayed') return { state: where.state };
      try {
        const known = await readDependents(where.dir);
        if (!known.includes(dependent)) {
          const most = this.d.maxDependents ?? MAX_DEPENDENTS;
          if (known.length >= most) throw RqError.of('RQ_ERR_TOO_MANY_DEPENDENTS', `${this.queue}/${id}`, most);
          await appendDependent(where.dir, dependent, new Date(), this.d.spool.dirSync);
        }
      } catch (err) {
        if (tries < APPEND_TRIES && isErrno(err, 'ENOENT')) continue;
        throw err;
      }
      await this.untilFinished(id);
      const now = await this.d.locate(id);
      if (!now) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
      if (now.state !== 'err') return { state: now.state };
      const msg = await this.d.spool.readMessage('err', now.dir.endsWith(`/.${id}`) ? `.${id}` : id).catch(() => null);
      return { state: 'err', outcome: String(msg?.outcome ?? 'failed') };
    }
  }

  /** A message deleted after it ended, whose dependents are still being told: its end. Else no such message. */
  private async endOfDeleted(id: string): Promise<DependencyState> {
    const e = await this.outbox.read(id);
    if (!e?.deleted) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
    return { state: e.state as State, ...(e.outcome ? { outcome: e.outcome } : {}) };
  }

  /** Waits for a finish in progress; bounded, since a rename that failed after its outbox write never reports. */
  private async untilFinished(id: string): Promise<void> {
    const f = this.finishing.get(id);
    if (f) await Promise.race([f.done, this.backoff.sleep(FINISH_WAIT_MS)]);
  }

  /** At start, after recovery: an entry whose message is in the state it records is sent again; others are stale. */
  async replay(): Promise<void> {
    for (const entry of await this.outbox.list()) {
      const where = await this.d.locate(entry.id);
      const gone = entry.state === 'deleted' || entry.deleted === true;
      if (gone ? where === null : where?.state === entry.state) void this.deliver(entry);
      else await this.outbox.remove(entry.id);
    }
  }

  private async deliver(entry: OutboxEntry): Promise<void> {
    const left = new Map(entry.dependents.filter((r) => !entry.done.includes(r)).map((r) => [r, '']));
    const dependency = `${this.queue}/${entry.id}`;
    for (const wait of this.backoff.waits()) {
      if (!left.size) break;
      await Promise.all(
        [...left.keys()].map(async (ref) => {
          const here = !isUrlRef(ref);
          const answer =
            here && !this.d.queueExists(ref.slice(0, ref.indexOf('/')))
              ? 'ignored'
              : await this.d.notify(ref, { dependency, state: entry.state, ...(entry.outcome ? { outcome: entry.outcome } : {}) });
          if (typeof answer === 'string') left.delete(ref);
          else left.set(ref, answer.unanswered);
        }),
      );
      if (left.size) {
        this.d.log.warn({ msg_id: entry.id, waiting: Object.fromEntries(left) }, 'dependents did not answer; telling them again later');
        await this.backoff.sleep(wait);
      }
    }
    if (!left.size)
      await this.outbox.remove(entry.id).catch((err: Error) => this.d.log.warn({ msg_id: entry.id, err: err.message }, 'outbox entry not removed'));
  }

  close(): void {
    this.backoff.close();
  }
}
