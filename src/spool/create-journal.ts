// A queue's create journal: a create is durable once its record is, so the message dir skips its own fsyncs until a checkpoint.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../errors.js';
import { fsyncPath } from './durable.js';
import { GroupAppender } from './group-appender.js';
import { type JournalRecord, encodeRecord, parseJournal } from './journal-records.js';
import type { SpoolFs } from './spool-fs.js';

export interface JournalOptions {
  dir: string;
  fs: SpoolFs;
  /** A checkpoint follows the first record of a segment within this long (ms). */
  maxDelayMs?: number;
  /** Or as soon as a segment holds this many records. */
  maxRecords?: number;
  /** A background checkpoint failed: its segments stay, and the next checkpoint tries again. */
  onError?: (err: Error) => void;
}

interface Segment {
  file: string;
  appender: GroupAppender;
  /** The file exists and its name is durable in the journal dir: its records can count. */
  ready: Promise<void>;
  /** Every append made to it, settled or not: a checkpoint deletes the file only after all of them. */
  writes: Promise<void>[];
}

const SEGMENT_RE = /^(\d{12})\.log$/;

/** The journal files in `dir`, oldest first. */
export async function journalFiles(dir: string): Promise<string[]> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => SEGMENT_RE.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

/**
 * Deletes segments whose records a filesystem sync has covered, durably: a delete of a message
 * waits for this, and a segment back after a power cut (a filesystem without a journal keeps no
 * order of its metadata) would make that message again.
 */
export async function deleteSegments(files: string[], dir: string, fs: SpoolFs): Promise<void> {
  for (const f of files) await fs.rm(f, { force: true });
  await fsyncPath(dir, fs).catch((err: unknown) => {
    if (!isErrno(err, 'ENOENT')) throw err;
  });
}

/** Every whole record left in `dir` by a previous run, and how many lines were torn or damaged. */
export async function readJournal(dir: string): Promise<{ files: string[]; records: JournalRecord[]; damaged: number }> {
  const files = await journalFiles(dir);
  const out = { files, records: [] as JournalRecord[], damaged: 0 };
  for (const f of files) {
    const parsed = parseJournal(await fsp.readFile(f, 'utf8'));
    out.records.push(...parsed.records);
    out.damaged += parsed.damaged;
  }
  return out;
}

/**
 * Appends share one fdatasync per batch (GroupAppender). A checkpoint seals the segment being
 * written (later appends start the next), waits for its appends to settle, syncs the filesystem
 * (which makes every message dir the sealed records describe durable), and deletes it. Checkpoints
 * coalesce: a caller arriving while one runs waits for the next, which covers what it wrote.
 */
export class CreateJournal {
  private seq = 0;
  private current: Segment | null = null;
  private readonly sealed: Segment[] = [];
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly maxDelayMs: number;
  private readonly maxRecords: number;

  constructor(private readonly o: JournalOptions) {
    this.maxDelayMs = o.maxDelayMs ?? 1000;
    this.maxRecords = o.maxRecords ?? 10_000;
  }

  /** New segments number after any a crash left (replayed and deleted at start); the dir is made with the first. */
  async open(): Promise<void> {
    const last = (await journalFiles(this.o.dir)).at(-1);
    this.seq = last ? Number(SEGMENT_RE.exec(path.basename(last))![1]) : 0;
  }

  /** Resolves once the record is durable; rejects (nothing written that counts) when it cannot be. */
  append(rec: JournalRecord): Promise<void> {
    if (!this.current) this.current = this.segment();
    const seg = this.current;
    const line = encodeRecord(rec);
    const write = seg.ready.then(() => seg.appender.append(line));
    seg.writes.push(write);
    if (seg.writes.length >= this.maxRecords) queueMicrotask(() => this.background());
    return write;
  }

  private segment(): Segment {
    const file = path.join(this.o.dir, `${String(++this.seq).padStart(12, '0')}.log`);
    const { fs, dir } = this.o;
    const ready = (async () => {
      const made = await fs.open(file, 'a', 0o640).catch(async (err: unknown) => {
        if (!isErrno(err, 'ENOENT')) throw err;
        // Made again if it was deleted under a running queue: a create never depends on an operator's tidying.
        if ((await fs.mkdir(dir, { recursive: true })) !== undefined) await fsyncPath(path.dirname(dir), fs);
        return fs.open(file, 'a', 0o640);
      });
      await made.close();
      await fsyncPath(dir, fs);
    })();
    this.timer = setTimeout(() => this.background(), this.maxDelayMs);
    this.timer.unref();
    const seg: Segment = { file, appender: new GroupAppender(file, fs), ready, writes: [] };
    // A segment that could not be made (a full disk) takes no more appends: the next one tries anew.
    ready.catch(() => {
      if (this.current !== seg) return;
      this.current = null;
      this.sealed.push(seg);
    });
    return seg;
  }

  /** Records not yet covered by a finished checkpoint. */
  get pending(): boolean {
    return this.current !== null || this.sealed.length > 0;
  }

  /** Resolves when every record appended before the call is checkpointed (its message dir durable). */
  checkpoint(): Promise<void> {
    if (this.queued) return this.queued;
    if (this.running) {
      if (!this.current) return this.running;
      this.queued = this.running
        .catch(() => undefined)
        .then(() => {
          this.queued = null;
          return this.start();
        });
      return this.queued;
    }
    return this.pending ? this.start() : Promise.resolve();
  }

  /** A last checkpoint, so a clean stop leaves no journal behind. */
  async close(): Promise<void> {
    await this.checkpoint();
  }

  private background(): void {
    this.checkpoint().catch((err: Error) => this.o.onError?.(err));
  }

  private start(): Promise<void> {
    const p = this.run().finally(() => {
      if (this.running === p) this.running = null;
    });
    this.running = p;
    return p;
  }

  private async run(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.current) this.sealed.push(this.current);
    this.current = null;
    const batch = [...this.sealed];
    // Every append to a sealed segment has its answer before the segment can go.
    for (const s of batch) {
      await Promise.allSettled(s.writes);
      await s.appender.close();
    }
    await this.o.fs.syncfs(this.o.dir);
    await deleteSegments(
      batch.map((s) => s.file),
      this.o.dir,
      this.o.fs,
    );
    for (const s of batch) this.sealed.splice(this.sealed.indexOf(s), 1);
  }
}
