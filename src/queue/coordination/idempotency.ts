// Idempotent creates: a key seen within the window answers its first message and creates nothing; kept in a group-committed journal.
import fs from 'node:fs/promises';
import type { Logger } from 'pino';
import { isErrno } from '../../errors.js';
import { type DirSync, writeFileDurable } from '../../spool/durable.js';
import { GroupAppender } from '../../spool/group-appender.js';

export interface IdempotencyDeps {
  /** queues/<q>/idempotency.jsonl: `{"k": key, "id": msg_id, "at": ms}` per line. */
  file: string;
  windowMs: () => number;
  now: () => number;
  /** Does the message still exist (in any state)? A deleted one frees its key. */
  exists: (id: string) => Promise<boolean>;
  dirSync: DirSync;
  log: Logger;
}

interface Entry {
  id: string;
  at: number;
}

export class IdempotencyKeys {
  private readonly keys = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly journal: GroupAppender;
  /** Lines in the journal, and keys live when it was last rewritten: it is rewritten when it holds twice as many. */
  private lines = 0;
  private liveAtCompaction = 0;

  constructor(private readonly d: IdempotencyDeps) {
    this.journal = new GroupAppender(d.file);
  }

  /** Loads the keys still in the window; rewrites the journal without the others. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await fs.readFile(this.d.file, 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return;
      throw err;
    }
    const oldest = this.d.now() - this.d.windowMs();
    let total = 0;
    for (const line of text.split('\n')) {
      if (!line) continue;
      total++;
      try {
        const r = JSON.parse(line) as { k?: unknown; id?: unknown; at?: unknown };
        if (typeof r.k === 'string' && typeof r.id === 'string' && typeof r.at === 'number' && r.at >= oldest) this.keys.set(r.k, { id: r.id, at: r.at });
      } catch {
        // A line cut by a crash mid-append: its create was never acknowledged.
      }
    }
    if (total > this.keys.size) await this.compact();
    this.lines = this.liveAtCompaction = this.keys.size;
  }

  /**
   * The id of the message created with `key`: the one made within the window if it still exists,
   * else the one `create` makes now. `create` gets `record`, to run beside its own fsyncs.
   */
  async once(key: string, create: (record: (id: string) => Promise<void>) => Promise<string>): Promise<{ id: string; created: boolean }> {
    for (;;) {
      const pending = this.inFlight.get(key);
      if (pending) return { id: await pending, created: false };
      const known = this.keys.get(key);
      if (!known || known.at < this.d.now() - this.d.windowMs()) break;
      if (await this.d.exists(known.id)) return { id: known.id, created: false };
      // While exists() ran, another create with this key may have started or finished: look again.
      if (this.keys.get(key) === known && !this.inFlight.has(key)) break;
    }
    const made = create((id) => this.record(key, id));
    this.inFlight.set(key, made);
    try {
      return { id: await made, created: true };
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async record(key: string, id: string): Promise<void> {
    const entry = { id, at: this.d.now() };
    // In the map before the line is durable, so a compaction meanwhile keeps it (a key twice in the file is harmless).
    this.keys.set(key, entry);
    try {
      await this.journal.append(`${JSON.stringify({ k: key, ...entry })}\n`);
    } catch (err) {
      // The message itself is durable: answering an error now would make the client send it again.
      // The key still holds in memory; only a restart before its retry would forget it.
      this.d.log.warn({ key, msg_id: id, err: (err as Error).message }, 'idempotency key not journalled');
    }
    // Expired keys leave the map and the file once the file holds twice the keys live at the last compaction.
    if (++this.lines > 2 * this.liveAtCompaction + 1000) this.expire();
  }

  private expire(): void {
    const oldest = this.d.now() - this.d.windowMs();
    for (const [k, e] of this.keys) if (e.at < oldest) this.keys.delete(k);
    this.lines = this.liveAtCompaction = this.keys.size;
    void this.journal.compact(() => this.compact().catch((err) => this.d.log.warn({ err: (err as Error).message }, 'idempotency journal not compacted')));
  }

  private async compact(): Promise<void> {
    const text = [...this.keys].map(([k, e]) => `${JSON.stringify({ k, id: e.id, at: e.at })}\n`).join('');
    await writeFileDurable(this.d.file, text, this.d.dirSync, undefined, 0o640);
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}
