// The on-disk store of one queue: the only code that creates, moves, reads or deletes message dirs.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { type QueuePaths, queuePaths } from '../config/paths.js';
import { RqError, isErrno } from '../errors.js';
import type { CreateFields, Message } from '../message/message.js';
import { fullId } from '../message/message-id.js';
import { MSG_ID_RE, isMsgId } from '../message/names.js';
import { type State, STATES, isFinished } from '../message/states.js';
import { type AttachmentInfo, attachFile, deleteAttachment, listAttachments } from './attachments.js';
import { LazySums } from './attachment-sums.js';
import { BlankDirs } from './blanks.js';
import { type Created, MessageCreator, diskError } from './create.js';
import { CreateJournal } from './create-journal.js';
import { DirSync, mkdirDurable, renameDurable } from './durable.js';
import { HashDirMaker, hashCount, hashList, hashPath } from './hash-dir.js';
import { type HistoryEntry, type MoveNote, appendHistory, readHistory } from './history.js';
import * as files from './message-files.js';
import type { SpoolDeps } from './spool-deps.js';
import { type SpoolFs, nodeSpoolFs } from './spool-fs.js';

export type { Created } from './create.js';
export type { HistoryEntry, MoveNote } from './history.js';
export type { JobStatus } from './message-files.js';
export type { SpoolDeps } from './spool-deps.js';

const HASHED: ReadonlySet<State> = new Set(['done', 'relayed']);

export class QueueSpool {
  readonly paths: QueuePaths;
  readonly dirSync: DirSync;
  readonly fs: SpoolFs;
  readonly now: () => number;
  private readonly hashDirs: HashDirMaker;
  private readonly blanks: BlankDirs;
  private readonly creator: MessageCreator;
  private readonly journal?: CreateJournal;
  private seq = 0;
  private readonly lazySums = new LazySums();

  constructor(
    readonly root: string,
    readonly name: string,
    private readonly deps: SpoolDeps,
  ) {
    this.paths = queuePaths(root, name);
    this.fs = deps.fs ?? nodeSpoolFs;
    if (deps.journal !== false) this.journal = new CreateJournal({ dir: this.paths.journalDir, fs: this.fs, ...deps.journal, onError: deps.onJournalError });
    const journal = this.journal;
    this.dirSync = new DirSync(this.fs, journal && (() => journal.checkpoint()));
    this.now = deps.now ?? Date.now;
    this.hashDirs = new HashDirMaker(this.dirSync, this.fs);
    this.blanks = new BlankDirs(path.join(this.paths.dir, '.blank'), deps.blanks ?? 0, this.fs, deps.stageBlanks);
    this.creator = new MessageCreator({
      paths: this.paths,
      fs: this.fs,
      dirSync: this.dirSync,
      blanks: this.blanks,
      now: this.now,
      fullId: (id) => this.fullId(id),
      journal,
    });
  }

  /** Stops making blanks and waits for the one being made; a last journal checkpoint. */
  async close(): Promise<void> {
    await this.blanks.close();
    await this.journal?.close();
  }

  fullId(id: string): string {
    return fullId(this.deps.host, this.name, id);
  }

  async ensureDirs(): Promise<void> {
    for (const s of STATES) await mkdirDurable(this.paths.state[s], this.dirSync, this.fs);
    await this.journal?.open();
  }

  /** Whether a create into que/ is durable by its journal record: wherever its dir is after a crash, replay finds or remakes it. */
  get journaled(): boolean {
    return this.journal !== undefined;
  }

  /** Makes every journaled create's dir durable and deletes the records' segments (also done in the background, and before any other fsync). */
  checkpoint(): Promise<void> {
    return this.journal?.checkpoint() ?? Promise.resolve();
  }

  /** The directory of message `id` if it were in `state` (hash dirs for done/relayed). */
  msgDir(state: State, id: string): string {
    if (HASHED.has(state)) {
      const p = hashPath(this.paths.state[state], id);
      if (!p) throw RqError.of('RQ_ERR_INVALID_MSG_ID', `msg_id: ${id} has no date prefix for ${state}/`);
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

  /** See MessageCreator.createNow: visible at once, durable when `durable` resolves. */
  createNow(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message> }): Created {
    return this.creator.createNow(fields, opts);
  }

  /** See MessageCreator.createAfter: `before(id)` runs between the id's allocation and the msg write. */
  createAfter(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message> }, before: (id: string) => Promise<void>): Promise<Created> {
    return this.creator.createAfter(fields, opts, before);
  }

  /** A create whose promise resolves once the message is durable. */
  async create(fields: CreateFields, opts: { commit: boolean; extra?: Partial<Message>; before?: (id: string) => Promise<void> }): Promise<Message> {
    const c = opts.before ? await this.createAfter(fields, opts, opts.before) : this.createNow(fields, opts);
    await c.durable;
    return c.msg;
  }

  /** prep → que, durably. */
  async commit(id: string): Promise<void> {
    await this.move(id, 'prep', 'que', { actor: 'commit' });
  }

  /** What a move to `to` needs before its rename: the hash dir of done/relayed, the outbox of a finish. */
  private async prepareMove(from: State, to: State, id: string): Promise<void> {
    if (HASHED.has(to)) await this.hashDirs.ensure(this.paths.state[to], id);
    // Nothing to await for a message without dependents (nearly every one).
    if (isFinished(to) && !isFinished(from)) await this.deps.beforeFinish?.(id, from, to);
  }

  /**
   * One rename and its history line, synchronously (a thread-pool hop per step would add to commit-to-start); the target
   * must exist (prepareMove). `sync` fsyncs both state dirs (group committed); que → run skips it: recovery undoes it anyway.
   */
  moveNow(id: string, from: State, to: State, note: MoveNote): { dir: string; sync: () => Promise<void> } {
    const dir = this.msgDir(to, id);
    try {
      this.fs.renameSync(this.msgDir(from, id), dir);
    } catch (err) {
      throw diskError(`move ${id} from ${from} to ${to}`, err);
    }
    if (!note.lineLater) this.appendHistory(dir, { from, to, actor: note.actor, ...note.details, reason: note.reason });
    this.deps.onMoved?.({ id, from, to, actor: note.actor, reason: note.reason, details: note.details });
    const sync = () =>
      Promise.all([this.dirSync.sync(this.paths.state[from]), this.dirSync.sync(path.dirname(dir))]).then(
        () => undefined,
        (err) => {
          throw diskError(`sync after moving ${id} to ${to}`, err);
        },
      );
    return { dir, sync };
  }

  /**
   * prepareMove + moveNow: the message is in `to` when this resolves, durable once `sync`
   * resolves. A hash dir removed behind our back (cleaner) is made again once.
   */
  async beginMove(id: string, from: State, to: State, note: MoveNote): Promise<{ dir: string; sync: () => Promise<void> }> {
    await this.prepareMove(from, to, id);
    try {
      return this.moveNow(id, from, to, note);
    } catch (err) {
      if (isErrno((err as RqError).cause, 'ENOENT') && HASHED.has(to) && (await this.exists(from, id))) {
        this.hashDirs.forget(path.dirname(this.msgDir(to, id)));
        return this.beginMove(id, from, to, note);
      }
      throw err;
    }
  }

  /** beginMove, durable before it resolves unless `durable: false`. */
  async move(id: string, from: State, to: State, note: MoveNote & { durable?: boolean }): Promise<string> {
    const moved = await this.beginMove(id, from, to, note);
    if (note.durable !== false) await moved.sync();
    return moved.dir;
  }

  readMessage(state: State, id: string): Promise<Message> {
    return files.readMessage(this.msgDir(state, id), id);
  }

  writeMessage(state: State, id: string, msg: Message): Promise<void> {
    return files.writeMessage(this.msgDir(state, id), msg, this.dirSync);
  }

  readStatus(state: State, id: string): Promise<files.JobStatus | null> {
    return files.readStatus(this.msgDir(state, id));
  }

  readStatusAt(dir: string): Promise<files.JobStatus | null> {
    return files.readStatus(dir);
  }

  /** See message-files.writeStatus; `durable` for final texts. */
  writeStatus(dir: string, text: string | null, durable = false): Promise<void> {
    return files.writeStatus(dir, text, this.fs, durable ? this.dirSync : undefined);
  }

  stageRun(dir: string): Promise<void> {
    return files.stageRun(dir, this.fs);
  }

  makeJobDir(dir: string): string {
    return files.makeJobDir(dir, this.fs);
  }

  writePid(dir: string, pid: number): void {
    files.writePid(dir, pid, this.fs);
  }

  removePid(dir: string): Promise<void> {
    return files.removePid(dir, this.fs);
  }

  markResend(dir: string): Promise<void> {
    return files.markResend(dir, this.fs);
  }

  /** A history line that is not a move (a shutdown's interruption); moves write their own. */
  appendHistory(dir: string, entry: Omit<HistoryEntry, 'at'>): void {
    appendHistory(this.fs, dir, this.now(), entry, (err) => this.deps.onHistoryError?.(err));
  }

  async readHistory(state: State, id: string): Promise<HistoryEntry[]> {
    if (!isMsgId(id)) return [];
    return (await readHistory(this.msgDir(state, id), id, state)) ?? [];
  }

  /** A message dir relative to the root, as the `path` field shows it. */
  relPath(dir: string): string {
    return path.relative(this.root, dir);
  }

  async remove(state: State, id: string): Promise<void> {
    await this.deps.beforeFinish?.(id, state, 'deleted');
    // renameDurable syncs through this.dirSync, whose hook checkpoints the create journal: once it
    // resolves no record can bring the message back (a crash before it leaves the delete unanswered).
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
    return listAttachments(this.msgDir(state, id), this.lazySums);
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
}
