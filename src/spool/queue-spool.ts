// The on-disk store of one queue: the only code that creates, moves, reads or deletes message dirs.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type QueuePaths, queuePaths } from '../config/paths.js';
import { type State, STATES } from '../message/states.js';
import { RqError, isErrno } from '../errors.js';
import { type CreateFields, type Message, DEFAULT_MAX_COUNT, storable } from '../message/message.js';
import { DirSync, mkdirDurable, overwriteFile, renameDurable, writeFileDurable } from './durable.js';
import { HashDirMaker, hashCount, hashList, hashPath } from './hash-dir.js';
import { type HostInfo, fullId, idStamp, idTime } from '../message/message-id.js';
import { MSG_ID_RE, isMsgId } from '../message/names.js';
import { mapLimit } from './map-limit.js';
import { type AttachmentInfo, attachFile, deleteAttachment, isAttachTemp, linkAttachments, listAttachments } from './attachments.js';
import { BlankDirs } from './blanks.js';
import { type SpoolFs, nodeSpoolFs } from './spool-fs.js';

export interface SpoolDeps {
  dirSync?: DirSync;
  /** Every disk-changing call goes through it (tests record the order); the real fs by default. */
  fs?: SpoolFs;
  /** Epoch milliseconds. */
  now?: () => number;
  host: HostInfo;
  /** How many blank message directories to keep ready (see BlankDirs); none by default. */
  blanks?: number;
}

export interface HistoryEntry {
  at: string;
  from: State | null;
  to: State;
  actor: string;
  reason?: string;
}

export interface JobStatus {
  job_status: string | null;
}

export interface Recovered {
  prep: string[];
  que: Message[];
  /** Ids that were in run/ and went back to que/. */
  requeued: string[];
  /** Ids whose msg could not be read; moved to err/ with a status saying why. */
  broken: string[];
}

const HASHED: ReadonlySet<State> = new Set(['done', 'relayed']);
const RECOVERY_LANES = 32;
const MAX_ALLOC_TRIES = 10;

export class QueueSpool {
  readonly paths: QueuePaths;
  readonly dirSync: DirSync;
  private readonly fs: SpoolFs;
  private readonly now: () => number;
  private readonly hashDirs: HashDirMaker;
  private readonly blanks: BlankDirs;
  private seq = 0;

  constructor(
    readonly root: string,
    readonly name: string,
    private readonly deps: SpoolDeps,
  ) {
    this.paths = queuePaths(root, name);
    this.fs = deps.fs ?? nodeSpoolFs;
    this.dirSync = deps.dirSync ?? new DirSync(this.fs);
    this.now = deps.now ?? Date.now;
    this.hashDirs = new HashDirMaker(this.dirSync, this.fs);
    this.blanks = new BlankDirs(path.join(this.paths.dir, '.blank'), deps.blanks ?? 0, this.fs);
  }

  /** Stops making blanks and waits for the one being made. */
  async close(): Promise<void> {
    await this.blanks.close();
  }

  fullId(id: string): string {
    return fullId(this.deps.host, this.name, id);
  }

  async ensureDirs(): Promise<void> {
    for (const s of STATES) await mkdirDurable(this.paths.state[s], this.dirSync, this.fs);
  }

  /** The directory of message `id` if it were in `state` (hash dirs for done/relayed). */
  msgDir(state: State, id: string): string {
    if (HASHED.has(state)) {
      const p = hashPath(this.paths.state[state], id);
      if (!p) throw new RqError('RQ_ERR_INVALID_MSG_ID', `msg_id: ${id} has no date prefix for ${state}/`);
      return p;
    }
    return path.join(this.paths.state[state], id);
  }

  async exists(state: State, id: string): Promise<boolean> {
    if (!isMsgId(id)) return false;
    if (id.startsWith('.') && state !== 'err') return false;
    try {
      return (await fsp.stat(this.msgDir(state, id))).isDirectory();
    } catch {
      return false;
    }
  }

  /** Where a message is on disk, in the classic lookup order. */
  async locate(id: string): Promise<State | null> {
    for (const s of STATES) if (await this.exists(s, id)) return s;
    return null;
  }

  /**
   * Allocates an id and writes the message durably. With `commit` it lands in que/ directly
   * (the private temp dir is renamed straight into que/), otherwise in prep/. Nothing is left
   * behind when any step fails.
   *
   * `onRenamed` runs as soon as the directory has its final name, before the fsyncs, so a queue can
   * start the message while its bytes are on their way to the disk; the promise resolves only once
   * the msg file, the message directory and the state directory are fsynced. A crash in between
   * can lose or tear a message that may already have started, but its creator was never told `ok`
   * (and a torn msg is moved to err by the recovery scan): the fsyncs are off the commit-to-start path.
   */
  async create(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message>; onRenamed?: (msg: Message) => void }): Promise<Message> {
    const { tmpDir, id, ms, blank } = this.allocate();
    const msg: Message = {
      ...fields,
      ...opts.extra,
      msg_id: id,
      dest: fields.dest,
      orig_msg_id: fields.orig_msg_id ?? this.fullId(id),
      count: fields.count ?? 0,
      max_count: fields.max_count ?? DEFAULT_MAX_COUNT,
      due: fields.due ?? Math.floor(ms / 1000),
    };
    const to: State = opts.commit ? 'que' : 'prep';
    const target = this.msgDir(to, id);
    let published = false;
    const fds: number[] = [];
    try {
      // Up to the rename every step is a metadata syscall of a few µs, done synchronously: a
      // thread-pool hop per step added ~0.5 ms to create-to-start and queued behind running fsyncs.
      // No history line: the create entry is implied by the id (see readHistory), which spares a
      // write per create, and without a blank the inode of a history file (a third of the create rate).
      const file = this.fs.openSync(path.join(tmpDir, 'msg'), blank ? 'r+' : 'wx', 0o644);
      fds.push(file);
      this.fs.writeFileSync(file, JSON.stringify(storable(msg)));
      // Opened before the rename: the descriptor follows the directory wherever the dispatcher moves it.
      const dir = this.fs.openSync(tmpDir, 'r');
      fds.push(dir);
      this.fs.renameSync(tmpDir, target);
      published = true;
      opts.onRenamed?.(msg);
      await Promise.all([this.fs.fsync(file), this.fs.fsync(dir)]);
      await this.dirSync.sync(this.paths.state[to]);
    } catch (err) {
      await this.fs.rm(published ? target : tmpDir, { recursive: true, force: true }).catch(() => undefined);
      throw diskError('create message', err);
    } finally {
      for (const fd of fds) this.fs.closeSync(fd);
    }
    return msg;
  }

  /**
   * A private directory for a new message (a blank when one is ready), whose inode number makes the
   * id unique. Synchronous: see create.
   */
  private allocate(): { tmpDir: string; id: string; ms: number; blank: boolean } {
    const blank = this.blanks.take();
    if (blank) {
      const ms = this.now();
      try {
        return { tmpDir: blank, id: `${idStamp(ms)}.${fs.statSync(blank).ino}`, ms, blank: true };
      } catch {
        // Removed behind our back: make one the slow way.
      }
    }
    let lastErr: unknown;
    for (let i = 0; i < MAX_ALLOC_TRIES; i++) {
      const ms = this.now();
      const stamp = idStamp(ms);
      // The temp name only has to be unique among concurrent allocations; the inode makes the id unique.
      const tmpDir = path.join(this.paths.state.prep, `_${stamp}.${process.pid}.${this.seq++}`);
      try {
        this.fs.mkdirSync(tmpDir);
        const { ino } = fs.statSync(tmpDir);
        return { tmpDir, id: `${stamp}.${ino}`, ms, blank: false };
      } catch (err) {
        lastErr = err;
        try {
          this.fs.rmdirSync(tmpDir);
        } catch {
          // Never made, or not empty: recovery removes leftovers at the next start.
        }
        if (!isErrno(err, 'EEXIST')) break;
      }
    }
    throw new RqError('RQ_ERR_ID_ALLOCATION', `could not allocate a message id in ${this.paths.state.prep}: ${errText(lastErr)}`, { cause: lastErr });
  }

  /** prep → que. `onRenamed` runs once the message is visible in que/, before the fsyncs. */
  async commit(id: string, onRenamed?: (dir: string) => void): Promise<void> {
    await this.move(id, 'prep', 'que', { actor: 'commit', onRenamed });
  }

  /**
   * One rename and its history line, synchronously: a few microseconds each, where the thread
   * pool would add a round trip per step to the dispatcher's commit-to-start latency. The target
   * must exist (hash dirs: see move). Not durable by itself.
   */
  moveNow(id: string, from: State, to: State, note: { actor: string; reason?: string }): string {
    const dst = this.msgDir(to, id);
    try {
      this.fs.renameSync(this.msgDir(from, id), dst);
    } catch (err) {
      throw diskError(`move ${id} from ${from} to ${to}`, err);
    }
    this.appendHistory(dst, { from, to, actor: note.actor, reason: note.reason });
    return dst;
  }

  /**
   * Moves a message between states with one rename, then fsyncs both directories (group
   * committed). `durable: false` skips the fsyncs, for moves whose loss at a crash the recovery
   * scan undoes anyway (que → run). `onRenamed` runs between the rename and the fsyncs.
   */
  async move(id: string, from: State, to: State, note: { actor: string; reason?: string; durable?: boolean; onRenamed?: (dir: string) => void }): Promise<string> {
    if (HASHED.has(to)) await this.hashDirs.ensure(this.paths.state[to], id);
    let dst: string;
    try {
      dst = this.moveNow(id, from, to, note);
    } catch (err) {
      if (isErrno((err as RqError).cause, 'ENOENT') && HASHED.has(to) && (await this.exists(from, id))) {
        // The minute dir was removed behind our back (cleaner): make it again once.
        this.hashDirs.forget(path.dirname(this.msgDir(to, id)));
        return this.move(id, from, to, note);
      }
      throw err;
    }
    note.onRenamed?.(dst);
    if (note.durable !== false) {
      const a = this.paths.state[from];
      const b = path.dirname(dst);
      await Promise.all([this.dirSync.sync(a), this.dirSync.sync(b)]).catch((err) => {
        throw diskError(`sync after moving ${id} to ${to}`, err);
      });
    }
    return dst;
  }

  async readMessage(state: State, id: string): Promise<Message> {
    const text = await fsp.readFile(path.join(this.msgDir(state, id), 'msg'), 'utf8');
    const msg = JSON.parse(text) as Message;
    if (typeof msg !== 'object' || msg === null || typeof msg.msg_id !== 'string') throw new Error(`msg of ${id} is not a message object`);
    return msg;
  }

  async writeMessage(state: State, id: string, msg: Message): Promise<void> {
    await writeFileDurable(path.join(this.msgDir(state, id), 'msg'), JSON.stringify(storable(msg)), this.dirSync, this.fs);
  }

  async readStatus(state: State, id: string): Promise<JobStatus | null> {
    try {
      const parsed = JSON.parse(await fsp.readFile(path.join(this.msgDir(state, id), 'status'), 'utf8')) as JobStatus;
      return { job_status: typeof parsed?.job_status === 'string' ? parsed.job_status : null };
    } catch {
      return null;
    }
  }

  /**
   * Status texts change on every pipe line: overwritten in place (no new inode per line), and
   * fsynced only when asked (final texts). A torn status after a crash reads as null; the message's
   * state is its directory, never this file.
   */
  async writeStatus(dir: string, text: string | null, durable = false): Promise<void> {
    await overwriteFile(path.join(dir, 'status'), JSON.stringify({ job_status: text }), durable ? this.dirSync : undefined, this.fs);
  }

  /**
   * Creates what a run needs (job/, job/stdio.log, history) ahead of the dispatch, so that on an
   * idle moment the inode creations are done before the message is picked. Best effort: the
   * message may move meanwhile (then the paths are gone and nothing is created), and the
   * dispatcher creates whatever is missing.
   */
  async stageRun(dir: string): Promise<void> {
    try {
      await this.fs.mkdir(path.join(dir, 'job'));
      await (await this.fs.open(path.join(dir, 'job', 'stdio.log'), 'a')).close();
      await (await this.fs.open(path.join(dir, 'history'), 'a')).close();
    } catch {
      // Moved, deleted or already staged: the dispatcher copes.
    }
  }

  /**
   * Appends a history line. Not fsynced (history is for people, the state is the directory); a
   * message that has already moved on (an ack, a delete) simply misses the line.
   */
  appendHistory(dir: string, entry: Omit<HistoryEntry, 'at'>): void {
    const line = JSON.stringify({ at: new Date(this.now()).toISOString(), ...entry }) + '\n';
    try {
      this.fs.appendFileSync(path.join(dir, 'history'), line);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw diskError(`history line in ${dir}`, err);
    }
  }

  /**
   * The history of a message. The create entry is not written (it would cost an inode per create
   * on the hot path); it is implied by the id, whose stamp is the creation time, and it went to
   * where the first recorded move came from (or to where the message still is).
   */
  async readHistory(state: State, id: string): Promise<HistoryEntry[]> {
    if (!isMsgId(id)) return [];
    const dir = this.msgDir(state, id);
    let text = '';
    try {
      text = await fsp.readFile(path.join(dir, 'history'), 'utf8');
    } catch {
      if (!(await this.exists(state, id))) return [];
    }
    const entries: HistoryEntry[] = [];
    for (const line of text.split('\n')) {
      try {
        if (line) entries.push(JSON.parse(line) as HistoryEntry);
      } catch {
        // A line torn by a crash mid-append: the others still tell the story.
      }
    }
    const created = idTime(id);
    if (created !== null && entries[0]?.from !== null) {
      entries.unshift({ at: new Date(created).toISOString(), from: null, to: entries[0]?.from ?? state, actor: 'create' });
    }
    return entries;
  }

  async remove(state: State, id: string): Promise<void> {
    const dir = this.msgDir(state, id);
    // Rename out of sight first so a crash mid-delete never leaves a half message in a state dir.
    const doomed = path.join(this.paths.state.prep, `_del.${process.pid}.${this.seq++}`);
    await renameDurable(dir, doomed, this.dirSync, this.fs);
    await this.fs.rm(doomed, { recursive: true, force: true });
  }

  async attach(id: string, source: string, name: string | undefined): Promise<{ name: string; md5: string; size: number }> {
    return attachFile(this.msgDir('prep', id), source, name, this.dirSync, this.fs);
  }

  /** Classic failure text, or null on success. */
  async deleteAttachment(id: string, name: string): Promise<string | null> {
    return deleteAttachment(this.msgDir('prep', id), name, this.dirSync, this.fs);
  }

  async attachments(state: State, id: string): Promise<Record<string, AttachmentInfo>> {
    return listAttachments(this.msgDir(state, id));
  }

  /**
   * A new committed message copied from another (clone, dup): fields as a create would copy
   * them, attachments hard-linked. It goes through prep so that the links are in place before
   * the message becomes visible in que/.
   */
  async createWithAttachments(fields: CreateFields, fromDir: string | null, extra?: Partial<Message>): Promise<Message> {
    const msg = await this.create(fields, { commit: fromDir === null, extra });
    if (fromDir === null) return msg;
    try {
      await linkAttachments(fromDir, this.msgDir('prep', msg.msg_id), this.dirSync, this.fs);
      await this.commit(msg.msg_id);
    } catch (err) {
      await this.remove('prep', msg.msg_id).catch(() => undefined);
      throw diskError('link attachments', err);
    }
    return msg;
  }

  async ackErrs(): Promise<number> {
    const ids = await this.listFlat('err');
    for (const id of ids) await this.fs.rename(path.join(this.paths.state.err, id), path.join(this.paths.state.err, `.${id}`));
    if (ids.length) await this.dirSync.sync(this.paths.state.err);
    return ids.length;
  }

  /** Ids in a flat state dir (prep, que, run, err); `acked` lists the dotted err entries instead. */
  async listFlat(state: State, acked = false): Promise<string[]> {
    const names = await fsp.readdir(this.paths.state[state]).catch(() => [] as string[]);
    return names.filter((n) => (acked ? n.startsWith('.') && MSG_ID_RE.test(n.slice(1)) : MSG_ID_RE.test(n)));
  }

  async count(state: State): Promise<number> {
    return HASHED.has(state) ? hashCount(this.paths.state[state]) : (await this.listFlat(state)).length;
  }

  async listHashed(state: 'done' | 'relayed', limit: number): Promise<string[]> {
    return hashList(this.paths.state[state], limit);
  }

  /**
   * The scan at queue start: temp names cleaned, run/ back to que/ (after `beforeRequeue`, which
   * the queue uses to kill a script left from a previous incarnation), que/ loaded. Derived fields
   * on disk are never trusted; a msg that cannot be read sends its message to err/.
   */
  async recover(beforeRequeue?: (id: string, dir: string) => Promise<void>): Promise<Recovered> {
    await this.ensureDirs();
    const out: Recovered = { prep: [], que: [], requeued: [], broken: [] };
    for (const n of await fsp.readdir(this.paths.state.prep)) {
      if (n.startsWith('_')) await this.fs.rm(path.join(this.paths.state.prep, n), { recursive: true, force: true });
    }
    await this.fs.rm(this.blanks.dir, { recursive: true, force: true });
    // Deep queues hold 100k messages: the per-message work runs RECOVERY_LANES at a time.
    for (const s of ['prep', 'run', 'err'] as const) {
      await mapLimit(await this.listFlat(s), RECOVERY_LANES, (id) => cleanTemps(this.msgDir(s, id), this.fs));
    }
    for (const id of await this.listFlat('run')) {
      const dir = this.msgDir('run', id);
      if (beforeRequeue) await beforeRequeue(id, dir);
      await this.fs.rm(path.join(dir, 'pid'), { force: true });
      await this.move(id, 'run', 'que', { actor: 'recovery', reason: 'interrupted' });
      out.requeued.push(id);
    }
    out.prep = (await this.listFlat('prep')).sort().reverse();
    const loaded = await mapLimit((await this.listFlat('que')).sort(), RECOVERY_LANES, async (id) => {
      await cleanTemps(this.msgDir('que', id), this.fs);
      try {
        const msg = await this.readMessage('que', id);
        msg.msg_id = id;
        if (typeof msg.due !== 'number') {
          const due = Number(msg.due);
          msg.due = Number.isFinite(due) ? due : Math.floor(this.now() / 1000);
          await this.writeMessage('que', id, msg);
        }
        return msg;
      } catch (err) {
        await this.writeStatus(this.msgDir('que', id), `unreadable msg at recovery: ${errText(err)}`, true);
        await this.move(id, 'que', 'err', { actor: 'recovery', reason: 'unreadable msg' });
        out.broken.push(id);
        return null;
      }
    });
    for (const m of loaded) if (m) out.que.push(m);
    return out;
  }
}

/**
 * Removes the temp files rq itself leaves at a crash: `msg.tmp`, `status.tmp`, `pid.tmp` in the
 * message dir and `.<name>.tmp` in attach/. `attach/x.tmp` is a legitimate attachment name and
 * job/ belongs to the script, so neither is touched.
 */
async function cleanTemps(dir: string, sfs: SpoolFs): Promise<void> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (n.endsWith('.tmp')) await sfs.rm(path.join(dir, n), { force: true });
  const attach = path.join(dir, 'attach');
  for (const n of await fsp.readdir(attach).catch(() => [] as string[])) {
    if (isAttachTemp(n)) await sfs.rm(path.join(attach, n), { force: true });
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function diskError(what: string, err: unknown): RqError {
  if (err instanceof RqError) return err;
  return new RqError('RQ_ERR_DISK', `${what} failed: ${errText(err)}`, { cause: err });
}
