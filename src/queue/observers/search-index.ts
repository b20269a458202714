// Search of a queue's messages in every state by field (brightroll `/search`): an in-memory index of each message's short fields, built from disk at the first search (and at each later start of a searched queue) and kept by the queue's events.
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { SearchPage } from '../../ipc/stats-reply.js';
import type { Message } from '../../message/message.js';
import { STATES, type State } from '../../message/states.js';
import { mapLimit } from '../../spool/map-limit.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { QueueEvents } from '../status/queue-events.js';
import { ReadOnce } from './read-once.js';
import { type Entry, type SearchQuery, matches, sortHits } from './search-filter.js';

/** Longer values are kept cut: a match in a cut value is checked against the message itself. */
const MAX_VALUE = 256;
const LANES = 16;
const PROGRESS_EVERY = 20_000;
const FINISHED = new Set<State>(['done', 'relayed', 'err']);

export type { SearchQuery };

export interface SearchHit {
  msg_id: string;
  state: State;
  /** An acknowledged error: its page is `/q/<q>/.<id>`. */
  acked?: true;
  fields: Record<string, string | number>;
}

/** The searchable form of a message: its top-level strings and numbers (tags joined by commas), each cut at MAX_VALUE. */
export function searchable(msg: Message): Pick<Entry, 'fields' | 'cut' | 'nums'> {
  const fields: Record<string, string> = {};
  let cut: Set<string> | undefined;
  let nums: Set<string> | undefined;
  for (const [k, v] of Object.entries(msg)) {
    if (k.startsWith('_')) continue;
    const text = typeof v === 'string' || typeof v === 'number' ? String(v) : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(',') : null;
    if (text === null) continue;
    if (text.length > MAX_VALUE) (cut ??= new Set()).add(k);
    if (typeof v === 'number') (nums ??= new Set()).add(k);
    fields[k] = text.slice(0, MAX_VALUE);
  }
  return { fields, ...(cut ? { cut } : {}), ...(nums ? { nums } : {}) };
}

/** An entry's searchable parts with the `keys` a change gave taken from `part` (its searchable form): fields, cuts and numbers alike. */
function merged(e: Entry, part: Pick<Entry, 'fields' | 'cut' | 'nums'>, keys: string[]): Pick<Entry, 'fields' | 'cut' | 'nums'> {
  const fields = { ...e.fields };
  const cut = new Set(e.cut);
  const nums = new Set(e.nums);
  for (const k of keys) {
    if (k in part.fields) fields[k] = part.fields[k];
    else delete fields[k];
    for (const [set, from] of [
      [cut, part.cut],
      [nums, part.nums],
    ] as const)
      if (from?.has(k)) set.add(k);
      else set.delete(k);
  }
  return { fields, cut: cut.size ? cut : undefined, nums: nums.size ? nums : undefined };
}

/** An entry's fields as a reply gives them: numbers as numbers. */
function replyFields(e: Entry): Record<string, string | number> {
  if (!e.nums) return e.fields;
  const out: Record<string, string | number> = { ...e.fields };
  for (const k of e.nums) out[k] = Number(out[k]);
  return out;
}

const textOf = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : Array.isArray(v) ? v.join(',') : String(v));

export class SearchIndex {
  private readonly index = new ReadOnce(() => this.build());
  private read = 0;

  constructor(private readonly d: { spool: QueueSpool; events: QueueEvents; log: Logger; now: () => number }) {
    // Its fields given their state, not spread into a literal: this runs on every create once the index is read.
    d.events.on('created', ({ msg, state }) =>
      this.index.apply((m) => m.set(msg.msg_id, Object.assign(searchable(msg), { state: m.get(msg.msg_id)?.state ?? state }))),
    );
    d.events.on('moved', ({ id, to }) =>
      this.index.apply((m) => {
        const e = m.get(id);
        if (!e) return this.stub(m, id, to);
        e.state = to;
        // Only an err message is acknowledged: a move takes it out of err.
        delete e.acked;
        if (FINISHED.has(to)) e.finished = d.now();
        else delete e.finished;
      }),
    );
    // Fields that finishing changes (outcome, failures) are read again once the message is at rest in err.
    d.events.on(
      'finished',
      ({ msg, outcome }) =>
        outcome.state === 'err' &&
        this.index.apply((m) => m.set(msg.msg_id, { state: 'err', ...searchable(msg), finished: m.get(msg.msg_id)?.finished ?? d.now() })),
    );
    d.events.on('acked', ({ ids }) =>
      this.index.apply((m) => {
        for (const id of ids) {
          const e = m.get(id);
          if (e) e.acked = true;
          // Renamed between the build's listing of err and its read: only this event tells of it.
          else this.stub(m, id, 'err', true);
        }
      }),
    );
    // A reschedule or a new priority: the list sorts and shows the new values.
    d.events.on('changed', ({ id, change }) =>
      this.index.apply((m) => {
        const e = m.get(id);
        if (e) Object.assign(e, merged(e, searchable(change as Message), Object.keys(change)));
      }),
    );
    // An acknowledged error is removed by its dotted name.
    d.events.on('removed', ({ id }) => this.index.apply((m) => m.delete(id.replace(/^\./, ''))));
  }

  /**
   * At queue start: builds the index in the background if this queue has been searched before, so
   * that the next search finds it ready; a queue nobody searches never pays for reading every message.
   */
  async warm(): Promise<void> {
    if (
      !(await fsp.stat(this.usedMark()).then(
        () => true,
        () => false,
      ))
    )
      return;
    await this.index.get().catch((err: Error) => this.d.log.warn({ err: err.message }, 'search index not built; the next search tries again'));
  }

  /** `.index/searched`: the next start builds the index at once (not state; a failed write only costs that). */
  private async markUsed(): Promise<void> {
    await fsp
      .mkdir(path.dirname(this.usedMark()), { recursive: true })
      .then(() => fsp.writeFile(this.usedMark(), ''))
      .catch(() => undefined);
  }

  private usedMark(): string {
    return path.join(path.dirname(this.d.spool.paths.tagsFile), 'searched');
  }

  get size(): number | null {
    return this.index.current?.size ?? null;
  }

  /** False until the index has been read (the first search, or the build at start of a searched queue). */
  get ready(): boolean {
    return this.index.current !== null;
  }

  /** Messages read so far by a build under way. */
  get reading(): number {
    return this.read;
  }

  /** Starts the build without waiting for it (a page that would rather say "reading" than wait long). */
  begin(): void {
    // Asked only while the index is not read: a second ask during the build only writes the mark again.
    void this.markUsed();
    void this.whenBuilt();
  }

  /** Resolves once the index is read (a failed read is logged and resolves too; the next search tries again). */
  whenBuilt(): Promise<void> {
    return this.index.get().then(
      () => undefined,
      (err: Error) => this.d.log.warn({ err: err.message }, 'search index not built; the next search tries again'),
    );
  }

  async search(q: SearchQuery): Promise<SearchPage & { messages: SearchHit[] }> {
    const { entries, hits } = await this.matching(q);
    const messages = hits.slice(q.offset, q.offset + q.limit).map((id) => {
      const e = entries.get(id)!;
      return { msg_id: id, state: e.state, ...(e.acked ? { acked: e.acked } : {}), fields: replyFields(e) };
    });
    return { total: hits.length, messages };
  }

  /** Every message the query picks (offset and limit aside), in its order, with where it is now. */
  async picked(q: SearchQuery): Promise<{ id: string; state: State; acked: boolean }[]> {
    const { entries, hits } = await this.matching(q);
    return hits.map((id) => ({ id, state: entries.get(id)!.state, acked: entries.get(id)!.acked === true }));
  }

  private async matching(q: SearchQuery): Promise<{ entries: Map<string, Entry>; hits: string[] }> {
    if (this.index.current === null && !this.index.underWay) await this.markUsed();
    const entries = await this.index.get();
    const wanted = Object.entries(q.fields);
    const sure: string[] = [];
    const unsure: string[] = [];
    for (const [id, e] of entries) {
      const verdict = matches(id, e, q, wanted);
      if (verdict !== 'no') (verdict === 'maybe' ? unsure : sure).push(id);
    }
    const hits = sure.concat(await this.verify(unsure, entries, q));
    if (q.sort === 'finished') await this.finishTimes(hits, entries);
    return { entries, hits: sortHits(hits, entries, q.sort, q.order) };
  }

  /**
   * Finish times of messages finished before this process saw them, read once from their `status`
   * file (written last as a message finishes): building the index does not pay for it, the first
   * sort on finished does.
   */
  private async finishTimes(ids: string[], entries: Map<string, Entry>): Promise<void> {
    const missing = ids.filter((id) => FINISHED.has(entries.get(id)!.state) && entries.get(id)!.finished === undefined);
    await mapLimit(missing, LANES, async (id) => {
      const e = entries.get(id)!;
      const dir = this.d.spool.msgDir(e.state, e.acked ? `.${id}` : id);
      const st = await fsp.stat(path.join(dir, 'status')).catch(() => fsp.stat(dir).catch(() => null));
      e.finished = st?.mtimeMs ?? 0;
    });
  }

  /** Candidates whose cut values may match, checked against their messages. */
  private async verify(ids: string[], entries: Map<string, Entry>, q: SearchQuery): Promise<string[]> {
    const ok = await mapLimit(ids, LANES, async (id) => {
      const e = entries.get(id)!;
      const msg: Record<string, unknown> | null = await this.d.spool.readMessage(e.state, e.acked ? `.${id}` : id).catch(() => null);
      return (
        msg !== null &&
        Object.entries(q.fields).every(([k, v]) => {
          const value = textOf(msg[k]);
          return value !== undefined && (q.exact ? value === v : value.includes(v));
        })
      );
    });
    return ids.filter((_, i) => ok[i]);
  }

  /** An entry for a message the index learns of by an event alone: its id now, its fields once read where it is. */
  private stub(m: Map<string, Entry>, id: string, state: State, acked?: true): void {
    const stub: Entry = { state, ...(acked ? { acked } : {}), fields: { msg_id: id }, stub: true };
    m.set(id, stub);
    this.refill(m, id, stub);
  }

  /**
   * A message the index learnt of by a move (it was between two of the build's directory listings,
   * or its create came before the build): its stub, in the map already, gets the fields read where it now is.
   */
  private refill(m: Map<string, Entry>, id: string, stub: Entry, tries = 5): void {
    const from = stub.state;
    void this.d.spool.readMessage(from, stub.acked ? `.${id}` : id).then(
      (msg) => {
        const e = m.get(id);
        if (e?.stub) m.set(id, { ...searchable(msg), state: e.state, ...(e.acked ? { acked: e.acked } : {}) });
      },
      () => {
        // Moved on before the read (que → run as it started): read it where it is now.
        const e = m.get(id);
        if (e?.stub && e.state !== from && tries > 1) this.refill(m, id, e, tries - 1);
      },
    );
  }

  private async build(): Promise<Map<string, Entry>> {
    const { spool, log } = this.d;
    const started = Date.now();
    const entries = new Map<string, Entry>();
    for (const state of STATES) {
      // Acknowledged errors (dotted names) are still err messages an operator may look for.
      const ids = state === 'done' || state === 'relayed' ? await spool.listHashed(state, Infinity) : await spool.listFlat(state);
      if (state === 'err') ids.push(...(await spool.listFlat('err', true)));
      let read = 0;
      await mapLimit(ids, LANES, async (name) => {
        const id = name.replace(/^\./, '');
        const msg = await spool.readMessage(state, name).catch(() => null);
        // Moved meanwhile: the move's event, replayed over this read, puts it where it is now.
        if (msg) entries.set(id, { state, ...(name !== id ? { acked: true as const } : {}), ...searchable(msg) });
        this.read++;
        if (++read % PROGRESS_EVERY === 0) log.info({ state, read, of: ids.length }, 'search index: reading messages');
      });
    }
    log.info({ messages: entries.size, ms: Date.now() - started }, 'search index built');
    return entries;
  }
}
