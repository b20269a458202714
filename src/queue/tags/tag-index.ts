// The queue's tag index (rq-beyond §B9.3): tag → messages, replayed from a group-committed journal, rebuilt from the spool when it is missing.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { isErrno } from '../../errors.js';
import { type DirSync, writeFileDurable } from '../../spool/durable.js';
import { GroupAppender } from '../../spool/group-appender.js';

export interface TagIndexDeps {
  /** queues/<q>/.index/tags.jsonl: `{"id","add":[…],"at"}`, `{"id","remove":[…]}`, `{"id","gone":true}` per line. */
  file: string;
  dirSync: DirSync;
  now: () => number;
  /** Every message of the queue that has tags, for a rebuild: the journal is derived data, `msg` is the truth. */
  scan: () => Promise<{ id: string; tags: string[]; at: number }[]>;
  log: Logger;
}

interface Line {
  id: string;
  add?: string[];
  remove?: string[];
  gone?: boolean;
  at?: number;
}

export class TagIndex {
  /** tag → (id → epoch ms it was tagged). */
  private readonly byTag = new Map<string, Map<string, number>>();
  /** id → its tags: a message gone is dropped in O(its tags), not O(every tag). */
  private readonly byId = new Map<string, Set<string>>();
  private readonly journal: GroupAppender;
  /** Lines in the journal, and pairs live when it was last rewritten: it is rewritten past twice as many, plus 1000. */
  private lines = 0;
  private liveAtCompaction = 0;
  private dirMade = false;

  constructor(private readonly d: TagIndexDeps) {
    this.journal = new GroupAppender(d.file);
  }

  /** Replays the journal; without one, rebuilds it from every message's tags. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.d.file, 'utf8');
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
      await this.rescan();
      return;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      this.lines++;
      try {
        this.apply(JSON.parse(line) as Line);
      } catch {
        // A line cut by a crash mid-append: its `msg` write never happened (the line goes first), so nothing is lost.
      }
    }
    this.liveAtCompaction = this.pairs();
    if (this.lines > 2 * this.liveAtCompaction + 1000) await this.compact();
  }

  /**
   * Forgets the journal and reads every message's tags again. It runs between two journal batches,
   * so a change made meanwhile waits and lands after it (its `msg` write waits for its line).
   */
  rebuild(): Promise<void> {
    return this.journal.compact(() => this.rescan());
  }

  private async rescan(): Promise<void> {
    this.byTag.clear();
    this.byId.clear();
    // Oldest first, so that the maps' insertion order is tagging order (see tagged()).
    for (const m of (await this.d.scan()).sort((a, b) => a.at - b.at)) this.apply({ id: m.id, add: m.tags, at: m.at });
    await this.compact();
  }

  /** Journals the change durably, then applies it; the caller writes `msg` after (§B9.5). */
  async change(id: string, add: readonly string[], remove: readonly string[] = []): Promise<void> {
    if (add.length === 0 && remove.length === 0) return;
    const line: Line = { id, ...(add.length ? { add: [...add] } : {}), ...(remove.length ? { remove: [...remove] } : {}), at: this.d.now() };
    await this.record(line);
  }

  /** A tagged message is gone (deleted, purged, cleaned away behind the queue's back). */
  async gone(id: string): Promise<void> {
    if (!this.byId.has(id)) return;
    // Out of memory at once: the message is gone already, and a lookup meanwhile must not list it.
    this.apply({ id, gone: true });
    await this.record({ id, gone: true });
  }

  /**
   * Ids of the messages with `tag`, most recently tagged first: each map keeps insertion order,
   * which is the journal's, which is tagging order (a compaction rewrites each tag's entries in
   * that order). Only the ids are copied: a lookup on a tag of 100,000 messages makes no objects.
   */
  tagged(tag: string): string[] {
    return Array.from(this.byTag.get(tag)?.keys() ?? []).reverse();
  }

  /** When `id` was tagged `tag` (epoch ms), 0 when it is not. */
  taggedAt(tag: string, id: string): number {
    return this.byTag.get(tag)?.get(id) ?? 0;
  }

  /** The tags of `id` now (none: an empty list). */
  tagsOf(id: string): string[] {
    const mine = this.byId.get(id);
    return mine ? [...mine] : [];
  }

  has(tag: string, id: string): boolean {
    return this.byTag.get(tag)?.has(id) ?? false;
  }

  /** How many messages carry each tag. */
  /** Most used first, then by name (qless `Tag top`; `rq tags` prints them in this order). */
  counts(): Record<string, number> {
    const pairs = [...this.byTag].map(([tag, ids]) => [tag, ids.size] as const);
    pairs.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return Object.fromEntries(pairs);
  }

  close(): Promise<void> {
    return this.journal.close();
  }

  private async record(line: Line): Promise<void> {
    if (!this.dirMade) await fs.mkdir(path.dirname(this.d.file), { recursive: true, mode: 0o750 });
    this.dirMade = true;
    await this.journal.append(`${JSON.stringify(line)}\n`);
    this.apply(line);
    if (++this.lines > 2 * this.liveAtCompaction + 1000) {
      this.liveAtCompaction = this.pairs();
      this.lines = this.liveAtCompaction;
      void this.journal.compact(() => this.compact()).catch((err) => this.d.log.warn({ err: (err as Error).message }, 'tag index not compacted'));
    }
  }

  private apply(line: Line): void {
    if (typeof line?.id !== 'string') return;
    const at = typeof line.at === 'number' ? line.at : 0;
    const mine = this.byId.get(line.id) ?? new Set<string>();
    for (const tag of line.add ?? []) {
      const ids = this.byTag.get(tag) ?? new Map<string, number>();
      if (!ids.has(line.id)) ids.set(line.id, at);
      this.byTag.set(tag, ids);
      mine.add(tag);
    }
    for (const tag of line.gone ? [...mine] : (line.remove ?? [])) {
      mine.delete(tag);
      const ids = this.byTag.get(tag);
      if (!ids?.delete(line.id)) continue;
      if (ids.size === 0) this.byTag.delete(tag);
    }
    if (mine.size) this.byId.set(line.id, mine);
    else this.byId.delete(line.id);
  }

  private pairs(): number {
    let n = 0;
    for (const ids of this.byTag.values()) n += ids.size;
    return n;
  }

  /** One `add` line per tag of each message, with the time it was tagged. */
  private async compact(): Promise<void> {
    const lines: string[] = [];
    for (const [tag, ids] of this.byTag) for (const [id, at] of ids) lines.push(`${JSON.stringify({ id, add: [tag], at })}\n`);
    await fs.mkdir(path.dirname(this.d.file), { recursive: true, mode: 0o750 });
    await writeFileDurable(this.d.file, lines.join(''), this.d.dirSync, undefined, 0o640);
    this.lines = this.liveAtCompaction = lines.length;
  }
}
