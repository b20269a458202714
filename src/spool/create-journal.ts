// A queue's create journal: a create is durable once its record is, so the message dir skips its own fsyncs until a checkpoint.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { isErrno } from '../errors.js';
import { fsyncPath } from './durable.js';
import { GroupAppender } from './group-appender.js';
import { type JournalRecord, encodeRecord, parseJournal } from './journal-records.js';
import type { SpoolFile, SpoolFs } from './spool-fs.js';

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
  /** `ready` resolved: a checkpoint may keep the file, emptied, for the next records. */
  named: boolean;
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
 * (which makes every message dir the sealed records describe durable), and deletes it, or keeps it
 * emptied for the next records. Checkpoints coalesce: a caller arriving while one runs waits for
 * the next, which covers what it wrote.
 */
export class CreateJournal {
  private seq = 0;
  private current: Segment | null = null;
  private readonly sealed: Segment[] = [];
  /** The next segment's file, open, empty and its name durable: kept or made by the last checkpoint that left no segment current. */
  private spare: { file: string; handle: SpoolFile } | null = null;
  private closing = false;
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

  /** Resolves once the record is durable; rejects (nothing written that counts) when it cannot be. `msgJson`: see encodeRecord. */
  append(rec: JournalRecord, msgJson?: string): Promise<void> {
    if (!this.current) this.current = this.takeSpare() ?? this.segment();
    const seg = this.current;
    const line = encodeRecord(rec, msgJson);
    const write = seg.ready.then(() => seg.appender.append(line));
    seg.writes.push(write);
    if (seg.writes.length >= this.maxRecords) queueMicrotask(() => this.background());
    return write;
  }

  private nextFile(): string {
    return path.join(this.o.dir, `${String(++this.seq).padStart(12, '0')}.log`);
  }

  /** Opens a new segment file; with `syncDir`, also makes its name durable (else the caller's dir fsync does). */
  private async makeFile(file: string, syncDir: boolean): Promise<SpoolFile> {
    const { fs, dir } = this.o;
    const handle = await fs.open(file, 'a', 0o640).catch(async (err: unknown) => {
      if (!isErrno(err, 'ENOENT')) throw err;
      // Made again if it was deleted under a running queue: a create never depends on an operator's tidying.
      if ((await fs.mkdir(dir, { recursive: true })) !== undefined) await fsyncPath(path.dirname(dir), fs);
      return fs.open(file, 'a', 0o640);
    });
    if (syncDir) await fsyncPath(dir, fs).catch((err: unknown) => handle.close().then(() => Promise.reject(err)));
    return handle;
  }

  /** The segment appends go to next, made now: its first records wait until its file and its name are durable. */
  private segment(file = this.nextFile(), made?: Promise<SpoolFile>): Segment {
    const seg: Segment = { file, appender: new GroupAppender(file, this.o.fs), ready: Promise.resolve(), writes: [], named: false };
    seg.ready = (made ?? this.makeFile(file, true)).then((h) => seg.appender.adopt(h));
    this.timer = setTimeout(() => this.background(), this.maxDelayMs);
    this.timer.unref();
    seg.ready.then(
      () => void (seg.named = true),
      // A segment that could not be made (a full disk) takes no more appends: the next one tries anew.
      () => {
        if (this.current !== seg) return;
        this.current = null;
        this.sealed.push(seg);
      },
    );
    return seg;
  }

  /**
   * The segment a checkpoint kept or made ahead, so that an isolated create's record waits for a fstat of
   * the open file, its write and its fdatasync. A file deleted under it since (an operator's
   * tidying) is made again.
   */
  private takeSpare(): Segment | null {
    const spare = this.spare;
    if (!spare) return null;
    this.spare = null;
    const made = spare.handle.stat().then(
      async (st) => {
        if (st.nlink > 0) return spare.handle;
        await spare.handle.close();
        return this.makeFile(spare.file, true);
      },
      (err: unknown) => spare.handle.close().then(() => Promise.reject(err)),
    );
    return this.segment(spare.file, made);
  }

  /** A spare that no append took (a stop): its file goes, durably, as a checkpointed segment's does. */
  private async dropSpare(): Promise<void> {
    const spare = this.spare;
    this.spare = null;
    if (!spare) return;
    await spare.handle.close();
    await deleteSegments([spare.file], this.o.dir, this.o.fs);
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
    this.closing = true;
    try {
      await this.checkpoint();
    } finally {
      await this.dropSpare();
    }
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
    const files = batch.map((s) => s.file);
    const keep = batch.filter((s) => s.named).at(-1)?.file;
    const spare = this.current || this.spare || this.closing ? null : ((await this.emptied(keep)) ?? (await this.openSpare()));
    const reused = spare !== null && files.includes(spare.file);
    const gone = files.filter((f) => f !== spare?.file);
    try {
      // A new spare's name is made durable by the same dir fsync that makes the deletes durable.
      if (gone.length > 0) await deleteSegments(gone, this.o.dir, this.o.fs);
    } catch (err) {
      // An emptied segment stays sealed, and the next checkpoint deletes it with the others.
      if (spare) await Promise.allSettled([spare.handle.close(), ...(reused ? [] : [this.o.fs.rm(spare.file, { force: true })])]);
      throw err;
    }
    for (const s of batch) this.sealed.splice(this.sealed.indexOf(s), 1);
    // Only a run that found no spare opens one; a later run that opened none keeps it (an append had made a segment meanwhile).
    if (spare) this.spare = spare;
  }

  /**
   * The last checkpointed segment, emptied durably to take the next records: its name is durable
   * already, so the next create's record costs no new inode and no dir fsync, and its first
   * fdatasync does not write out a new inode. Its records are covered by the syncfs before, and a
   * delete of a message waits for this checkpoint, so a crash that leaves them in it replays only
   * messages that are still there. Null when it cannot be (none whose name was made durable, gone,
   * a failed truncate): a new file is made instead, and the segment is deleted.
   */
  private async emptied(file: string | undefined): Promise<{ file: string; handle: SpoolFile } | null> {
    if (file === undefined) return null;
    const handle = await this.o.fs.open(file, fs.constants.O_WRONLY | fs.constants.O_APPEND).catch(() => null);
    if (!handle) return null;
    try {
      await handle.truncate(0);
      await handle.datasync();
      return { file, handle };
    } catch {
      await handle.close().catch(() => undefined);
      return null;
    }
  }

  /** The next segment's file opened ahead, or null when it cannot be (a full disk: the next append tries again). */
  private async openSpare(): Promise<{ file: string; handle: SpoolFile } | null> {
    const file = this.nextFile();
    return this.makeFile(file, false).then(
      (handle) => ({ file, handle }),
      () => null,
    );
  }
}
