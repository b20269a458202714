// Creating a message: an id from a fresh (or blank) directory's inode, the msg written, one rename into prep/ or que/.
import fs from 'node:fs';
import path from 'node:path';
import type { QueuePaths } from '../config/paths.js';
import { RqError, isErrno } from '../errors.js';
import { type CreateFields, type Message, DEFAULT_MAX_COUNT, storable } from '../message/message.js';
import { idStamp } from '../message/message-id.js';
import type { BlankDirs } from './blanks.js';
import type { CreateJournal } from './create-journal.js';
import type { DirSync } from './durable.js';
import type { SpoolFs } from './spool-fs.js';

const MAX_ALLOC_TRIES = 10;

/** What a create did: the message is visible in `dir` now, and on disk once `durable` resolves. */
export interface Created {
  msg: Message;
  dir: string;
  /** Resolves when the message survives a crash (its journal record, or msg, dir and state dir fsynced); rejects (message removed) on failure. */
  durable: Promise<void>;
}

interface Allocation {
  tmpDir: string;
  id: string;
  ms: number;
  /** A blank from the pool: its msg file exists already. */
  blank: boolean;
  /** The blank's msg, open for writing (BlankDirs): this create's to close. */
  msgFd?: number;
}

export interface CreatorDeps {
  paths: QueuePaths;
  fs: SpoolFs;
  dirSync: DirSync;
  blanks: BlankDirs;
  now: () => number;
  fullId: (id: string) => string;
  /** Creates into que/ are made durable by their record here; prep creates (attachments follow) by their own fsyncs. */
  journal?: CreateJournal;
}

export class MessageCreator {
  private seq = 0;

  constructor(private readonly d: CreatorDeps) {}

  /**
   * Allocates an id and writes the message. With `commit` it lands in que/ directly (the private
   * temp dir is renamed straight into que/), otherwise in prep/. Everything up to the rename is
   * synchronous, a metadata syscall of a few µs each: a thread-pool hop per step added ~0.5 ms to
   * create-to-start and queued behind running fsyncs. The caller may start the message at once;
   * its creator is told `ok` only once `durable` resolves. A crash in between can lose or tear a
   * message that may already have started, but nobody was told `ok` (and a torn msg is moved to
   * err by the recovery scan). Nothing is left behind when any step fails.
   */
  createNow(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message> }): Created {
    const alloc = this.allocate();
    try {
      return this.write(alloc, fields, opts);
    } catch (err) {
      // A blank of the pool removed behind our back (its msg written unlinked, its rename finding nothing): made the
      // slow way, as a blank found gone at allocation is. Not in createAfter: its `before` has recorded the id already.
      if (alloc.msgFd === undefined || !isErrno((err as { cause?: unknown }).cause, 'ENOENT')) throw err;
      return this.write(this.allocate(false), fields, opts);
    }
  }

  /**
   * createNow with `before(id)` awaited between the id's allocation and the msg write: a journal
   * that must hold the id before the message exists (the tag index, rq-beyond §B9.5). Only the
   * messages that need it pay the wait. A failed `before` leaves nothing behind.
   */
  async createAfter(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message> }, before: (id: string) => Promise<void>): Promise<Created> {
    const alloc = this.allocate();
    try {
      await before(alloc.id);
    } catch (err) {
      if (alloc.msgFd !== undefined) this.d.fs.closeSync(alloc.msgFd);
      this.d.fs.rmSync(alloc.tmpDir, { recursive: true, force: true });
      throw err;
    }
    return this.write(alloc, fields, opts);
  }

  private write({ tmpDir, id, ms, blank, msgFd }: Allocation, fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message> }): Created {
    // Object.assign, not `{ ...fields, msg_id }`: V8 gives every object built by a spread followed by
    // more keys a hidden class of its own (~300 bytes each, and megamorphic lookups), and the que
    // keeps every message it holds.
    const msg: Message = Object.assign({}, fields, opts.extra, {
      msg_id: id,
      dest: fields.dest,
      orig_msg_id: fields.orig_msg_id ?? this.d.fullId(id),
      count: fields.count ?? 0,
      max_count: fields.max_count ?? DEFAULT_MAX_COUNT,
      due: fields.due ?? Math.floor(ms / 1000),
    });
    const stateDir = this.d.paths.state[opts.commit ? 'que' : 'prep'];
    // Joined by hand: both parts are clean (a state dir's path, an id without a slash), and path.join's normalising is a µs a create.
    const target = `${stateDir}/${id}`;
    const journal = opts.commit ? this.d.journal : undefined;
    const stored = storable(msg);
    const text = JSON.stringify(stored);
    const sfs = this.d.fs;
    const fds: number[] = msgFd === undefined ? [] : [msgFd];
    const closeAll = () => fds.splice(0).forEach((fd) => sfs.closeSync(fd));
    try {
      // No history line: the create entry is implied by the id (see readHistory), which spares a
      // write per create, and without a blank the inode of a history file (a third of the create rate).
      if (msgFd === undefined) fds.push(sfs.openSync(path.join(tmpDir, 'msg'), blank ? 'r+' : 'wx', 0o644));
      sfs.writeFileSync(fds[0], text);
      // Opened before the rename: the descriptor follows the directory wherever the dispatcher moves it.
      if (!journal) fds.push(sfs.openSync(tmpDir, 'r'));
      sfs.renameSync(tmpDir, target);
    } catch (err) {
      closeAll();
      sfs.rmSync(tmpDir, { recursive: true, force: true });
      throw diskError('create message', err);
    }
    if (journal) closeAll();
    const durable = (async () => {
      try {
        // One microtask later: the caller starts the message first (in the same synchronous call),
        // and the record's encoding and its trip to the thread pool come after the script's spawn.
        await Promise.resolve();
        if (journal) await journal.append({ id, state: 'que', msg: stored }, text).catch((err) => this.withoutJournal(err));
        else {
          await Promise.all(fds.map((fd) => sfs.fsync(fd)));
          await this.d.dirSync.sync(stateDir);
        }
      } catch (err) {
        await sfs.rm(target, { recursive: true, force: true }).catch(() => undefined);
        throw diskError('create message', err);
      } finally {
        closeAll();
      }
    })();
    return { msg, dir: target, durable };
  }

  /**
   * A journal that cannot take the record (its disk full, say) while the message is on disk and may
   * have run already: refusing the create then would refuse a message that ran. It is made durable
   * instead by a syncfs of the spool's filesystem, which covers it wherever the queue has moved it
   * meanwhile and needs no new space; only when that fails too is the create refused.
   */
  private async withoutJournal(journalErr: unknown): Promise<void> {
    try {
      await this.d.dirSync.syncFilesystem(this.d.paths.state.que);
    } catch {
      throw journalErr;
    }
  }

  /** A private directory for a new message (a blank when one is ready), whose inode number makes the id unique. */
  private allocate(fromPool = true): Allocation {
    const blank = fromPool ? this.d.blanks.take() : undefined;
    if (blank?.made) {
      const ms = this.d.now();
      return { tmpDir: blank.dir, id: messageId(idStamp(ms), blank.made.ino), ms, blank: true, msgFd: blank.made.fd };
    }
    if (blank) {
      const ms = this.d.now();
      try {
        return { tmpDir: blank.dir, id: messageId(idStamp(ms), fs.statSync(blank.dir).ino), ms, blank: true };
      } catch {
        // Removed behind our back: make one the slow way.
      }
    }
    let lastErr: unknown;
    for (let i = 0; i < MAX_ALLOC_TRIES; i++) {
      const ms = this.d.now();
      const stamp = idStamp(ms);
      // The temp name only has to be unique among concurrent allocations; the inode makes the id unique.
      const tmpDir = path.join(this.d.paths.state.prep, `_${stamp}.${process.pid}.${this.seq++}`);
      try {
        this.d.fs.mkdirSync(tmpDir);
        return { tmpDir, id: messageId(stamp, fs.statSync(tmpDir).ino), ms, blank: false };
      } catch (err) {
        lastErr = err;
        try {
          this.d.fs.rmdirSync(tmpDir);
        } catch {
          // Never made, or not empty: recovery removes leftovers at the next start.
        }
        if (!isErrno(err, 'EEXIST')) break;
      }
    }
    throw RqError.of('RQ_ERR_ID_ALLOCATION', this.d.paths.state.prep, errText(lastErr)).causedBy(lastErr);
  }
}

/**
 * `<stamp>.<inode>` as one flat string: a template literal makes a chain of pieces (V8's cons string,
 * 32 bytes and its parts), which a deep que would keep per message; join writes the characters once.
 */
function messageId(stamp: string, ino: number): string {
  return [stamp, ino].join('.');
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function diskError(what: string, err: unknown): RqError {
  if (err instanceof RqError) return err;
  return RqError.of('RQ_ERR_DISK', what, errText(err)).causedBy(err);
}
