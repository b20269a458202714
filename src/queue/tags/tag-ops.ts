// Tags on a queue's messages (rq-beyond §B9): the index, changing tags in any state, lookup by tag, counts, cancel by tag.
import type { Logger } from 'pino';
import { RqError, invalidField, isErrno } from '../../errors.js';
import { type PartialReport, addFailure, failureOf } from '../../ipc/partial-reply.js';
import type { TaggedEntry, TaggedPage } from '../../ipc/tag-lists.js';
import { idTime } from '../../message/message-id.js';
import type { Message } from '../../message/message.js';
import { MAX_TAGS } from '../../message/tags.js';
import { STATES, type State } from '../../message/states.js';
import { mapLimit } from '../../spool/map-limit.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { CancelRequest, LifecycleOps } from '../lifecycle/lifecycle-ops.js';
import type { Located, MessageOps } from '../lifecycle/message-ops.js';
import type { MessageIndex } from '../index/message-index.js';
import { priorityOf } from '../index/que-index.js';
import type { QueueEvents } from '../status/queue-events.js';
import { TagIndex } from './tag-index.js';
import type { Transitions } from '../transitions/transitions.js';

export interface TagOpsDeps {
  spool: QueueSpool;
  index: Pick<MessageIndex, 'liveMessage' | 'liveState' | 'hasPrep'>;
  moves: Pick<Transitions, 'forgetPrep'>;
  ops: MessageOps;
  lifecycle: LifecycleOps;
  events: QueueEvents;
  now: () => number;
  log: Logger;
}

export interface TaggedQuery {
  state?: State;
  offset: number;
  limit: number;
}

/** msg files read at once while rebuilding the index. */
const SCAN_LANES = 16;
/** A tag change retried when a move took the message away between locating it and writing it. */
const WRITE_TRIES = 3;

function tagsOf(msg: Message): string[] {
  return Array.isArray(msg.tags) ? (msg.tags as string[]) : [];
}

export class TagOps {
  readonly index: TagIndex;

  constructor(private readonly d: TagOpsDeps) {
    this.index = new TagIndex({ file: d.spool.paths.tagsFile, dirSync: d.spool.dirSync, now: d.now, scan: () => this.scan(), log: d.log });
    d.events.on(
      'removed',
      ({ id }) => void this.index.gone(id).catch((err: Error) => d.log.warn({ msg_id: id, err: err.message }, 'tag index: removal not journalled')),
    );
  }

  /**
   * Replays (or rebuilds) the index, then adds what it lacks for the messages the recovery scan
   * loaded: a crash between a create's journal line and its `msg` cannot cause that (the line goes
   * first), but a journal deleted or cut by hand can.
   */
  async load(live: readonly Message[]): Promise<void> {
    await this.index.load();
    for (const m of live) {
      // Nothing missing: change() writes no line.
      await this.index.change(
        m.msg_id,
        tagsOf(m).filter((t) => !this.index.has(t, m.msg_id)),
      );
    }
  }

  /** The create hook: a new message's tags are journalled before its `msg` is written (§B9.5). */
  journalNew(id: string, tags: readonly string[]): Promise<void> {
    return this.index.change(id, tags);
  }

  /**
   * Adds and removes tags of a message in any state; the new list. An added tag is journalled
   * before the `msg` write and a removed one after it, so a crash leaves the index holding at
   * worst a tag the message lacks (dropped at lookup), never lacking one it has.
   */
  async change(id: string, add: readonly string[], remove: readonly string[], actor: string): Promise<string[]> {
    for (let tries = 1; ; tries++) {
      const where = await this.find(id);
      if (!where) throw RqError.of('RQ_ERR_NO_SUCH_MSG');
      const mem = this.d.index.liveMessage(id);
      const msg = mem ?? (await this.d.spool.readMessage(where.state, where.name));
      const before = tagsOf(msg);
      const added = add.filter((t) => !before.includes(t) && !remove.includes(t));
      const removed = remove.filter((t) => before.includes(t));
      const tags = [...before.filter((t) => !removed.includes(t)), ...added];
      if (tags.length > MAX_TAGS) throw invalidField('tags', `at most ${MAX_TAGS} tags`, tags.length);
      if (!added.length && !removed.length) return tags;
      await this.index.change(id, added);
      const updated: Message = { ...msg, tags };
      if (!tags.length) delete updated.tags;
      try {
        await this.d.spool.writeMessage(where.state, where.name, updated);
      } catch (err) {
        if (tries < WRITE_TRIES && isErrno(err, 'ENOENT')) continue;
        throw err;
      }
      this.remember(id, mem, tags);
      await this.index.change(id, [], removed);
      this.d.spool.appendHistory(where.dir, { event: 'tags', actor, ...(added.length ? { add: added } : {}), ...(removed.length ? { remove: removed } : {}) });
      return tags;
    }
  }

  /** Memory follows the write: a later write of the same message (a retry's) then keeps the tags. */
  private remember(id: string, mem: Message | undefined, tags: string[]): void {
    if (mem) {
      if (tags.length) mem.tags = tags;
      else delete mem.tags;
    } else if (this.d.index.hasPrep(id)) {
      // Only a prep message is in the prep map (known whole, or by its id): committed, it is read again, with its tags.
      this.d.moves.forgetPrep(id);
    }
  }

  /**
   * Messages carrying `tag`, most recently tagged first, each located and its `msg` re-read; index
   * entries whose message is gone or no longer tagged are dropped. Without `state`, `total` is the
   * index's count and only the page is confirmed.
   */
  async tagged(tag: string, q: TaggedQuery): Promise<TaggedPage> {
    const hits = this.index.tagged(tag);
    const page: TaggedEntry[] = [];
    const gone: string[] = [];
    let seen = 0;
    let dropped = 0;
    for (const id of hits) {
      if (!q.state && page.length >= q.limit) break;
      const live = this.d.index.liveState(id);
      // A live message is in memory: only a finished state costs a stat.
      if (q.state && live && live !== q.state) continue;
      if (q.state && !live && !['done', 'relayed', 'err'].includes(q.state)) continue;
      const entry =
        seen >= q.offset && page.length < q.limit ? await this.entry(id, tag, this.index.taggedAt(tag, id), q.state) : await this.stillTagged(id, tag, q.state);
      if (entry === 'gone') gone.push(id);
      if (entry === 'gone' || (entry === null && !q.state)) dropped++;
      if (entry === null || entry === 'gone') continue;
      if (entry !== true) page.push(entry);
      seen++;
    }
    return { total: q.state ? seen : hits.length - dropped, messages: page, ...(gone.length ? { gone } : {}) };
  }

  /** How many messages carry each tag. */
  counts(): Record<string, number> {
    return this.index.counts();
  }

  /** Cancels every prep, que and running message with `tag`; how many were, and which failed and why. */
  async cancelTagged(tag: string, req: CancelRequest): Promise<PartialReport> {
    const ids = this.index.tagged(tag).filter((id) => this.d.index.liveState(id) !== null);
    const report: PartialReport = { total: 0, done: 0, failed: 0, failures: [] };
    await mapLimit(ids, SCAN_LANES, async (id) => {
      const where = await this.d.ops.locate(id);
      // prep messages are not kept whole in memory (after a restart, only their ids): read them.
      const msg = where && (this.d.index.liveMessage(id) ?? (await this.d.spool.readMessage(where.state, id).catch(() => null)));
      if (!where || !msg || !tagsOf(msg).includes(tag)) return;
      report.total += 1;
      // A cancel that fails (a full disk) is reported by id, never counted as done or left unsaid.
      await this.d.lifecycle.cancel(id, where, req).then(
        () => void (report.done += 1),
        (err) => addFailure(report, { id, ...failureOf(err, 'cancel message') }),
      );
    });
    return report;
  }

  /** Rebuilds the index from every message's `msg` (`rq-mgr reindex`). */
  async reindex(): Promise<number> {
    await this.index.rebuild();
    return Object.values(this.index.counts()).reduce((a, b) => a + b, 0);
  }

  close(): Promise<void> {
    return this.index.close();
  }

  /** The page entry of a message that still has `tag` (and is in `state`, if asked); null otherwise, the entry dropped when it lost the tag. */
  private async entry(id: string, tag: string, at: number, state?: State): Promise<TaggedEntry | null | 'gone'> {
    const where = await this.find(id);
    // A finished message in another finished state (done when err was asked): not on this page, still tagged.
    if (state && where && where.state !== state) return null;
    const msg = where && (this.d.index.liveMessage(id) ?? (await this.d.spool.readMessage(where.state, where.name).catch(() => null)));
    if (!where || !msg || !tagsOf(msg).includes(tag)) return this.drop(id, tag, where !== null);
    const { status } = await this.d.ops.statusView(id, where);
    return { msg_id: id, state: where.state, status, due: Number(msg.due) || 0, priority: priorityOf(msg), tagged_at: new Date(at).toISOString() };
  }

  /** Counts a hit before the page: located (and in `state`, if asked), not re-read. */
  private async stillTagged(id: string, tag: string, state?: State): Promise<true | null | 'gone'> {
    const live = this.d.index.liveState(id);
    if (live) return !state || live === state ? true : null;
    const where = state && (await this.d.spool.exists(state, id)) ? state : (await this.find(id))?.state;
    if (where === undefined) return this.drop(id, tag, false);
    return !state || where === state ? true : null;
  }

  /** Where a message is, an acknowledged err one (err/.<id>) too: it still exists, and keeps its tags. */
  private async find(id: string): Promise<(Located & { name: string }) | null> {
    const where = await this.d.ops.locate(id);
    if (where) return { ...where, name: id };
    const acked = `.${id}`;
    return (await this.d.spool.exists('err', acked)) ? { state: 'err', dir: this.d.spool.msgDir('err', acked), name: acked } : null;
  }

  /** An index entry the message no longer backs: null when it lost the tag, 'gone' when it no longer exists. */
  private async drop(id: string, tag: string, exists: boolean): Promise<null | 'gone'> {
    const journalled = exists ? this.index.change(id, [], [tag]) : this.index.gone(id);
    await journalled.catch((err: Error) => this.d.log.warn({ msg_id: id, err: err.message }, 'tag index: stale entry not dropped'));
    return exists ? null : 'gone';
  }

  /** Every message of the queue with tags, for a rebuild: `at` is its creation time (the id's). */
  private async scan(): Promise<{ id: string; tags: string[]; at: number }[]> {
    const { spool } = this.d;
    const out: { id: string; tags: string[]; at: number }[] = [];
    for (const state of STATES) {
      const ids = state === 'done' || state === 'relayed' ? await spool.listHashed(state, Infinity) : await spool.listFlat(state);
      if (state === 'err') ids.push(...(await spool.listFlat('err', true)));
      const msgs = await mapLimit(ids, SCAN_LANES, (id) => spool.readMessage(state, id).catch(() => null));
      for (const m of msgs) if (m && tagsOf(m).length) out.push({ id: m.msg_id, tags: tagsOf(m), at: idTime(m.msg_id) ?? 0 });
    }
    return out;
  }
}
