// One queue: in-memory index of its messages, the dispatcher, script runs and their completion.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { State } from '../message/states.js';
import type { QueueConfig } from '../config/queue-config.js';
import { type HostInfo, hostUrl } from '../message/message-id.js';
import { QueueSpool } from '../spool/queue-spool.js';
import { attachmentNames } from '../spool/attachments.js';
import { isValidQueueName } from '../message/names.js';
import { type CreateFields, type Message, pickFields, statusText } from '../message/message.js';
import { QueIndex } from './que-index.js';
import { AdminState } from './admin-state.js';
import { type Completion, completionOf, decideOutcome, parseDup, parseLine } from './pipe-protocol.js';
import { type ExitInfo, type Launcher, type RunningScript, execArgv, resolveScript, scriptEnv, startScript } from './script-runner.js';
import { LatestWriter } from './status-writer.js';
import { killStaleScript } from './stale-scripts.js';

/** Sends one command to another local queue's socket; rejects when it does not answer. */
export type PeerCall = (queue: string, command: string, arg: unknown) => Promise<unknown>;

export interface QueueDeps {
  root: string;
  config: QueueConfig;
  host: HostInfo;
  log: Logger;
  peer: PeerCall;
  /** How scripts are started (chooseLauncher picks the native spawner or the child_process gate). */
  launch: Launcher;
  now?: () => number;
  /** The environment scripts inherit (spec §4.4 adds to it): a plain object, not process.env. */
  baseEnv: NodeJS.ProcessEnv;
  /** Grace between TERM and KILL when stopping scripts. */
  killGraceMs?: number;
}

interface RunEntry {
  msg: Message;
  /** run/<id> once the rename has happened. */
  dir: string | null;
  script: RunningScript | null;
  completion: Completion | null;
  jobStatus: string | null;
  status: LatestWriter | null;
  /** Writes that must land before the message leaves run/ (resend msg, dup copies). */
  pending: Set<Promise<unknown>>;
  dups: Message[];
  startedAt: number;
  /** The script has exited (or never started): the entry no longer holds a worker slot. */
  released: boolean;
}

export type Located = { state: State; dir: string };

/** Blank message directories kept ready: a burst of concurrent creates makes no inode on its path. */
const BLANKS = 16;

const CLONE_FIELDS = ['orig_msg_id', 'max_count', 'src', 'param1', 'param2', 'param3', 'param4', 'post_run_webhook', 'due', 'force_remote'] as const;
const DUP_FIELDS = ['orig_msg_id', 'max_count', 'src', 'param1', 'param2', 'param3', 'param4', 'post_run_webhook'] as const;

export class Queue {
  readonly spool: QueueSpool;
  readonly admin: AdminState;
  /** Prep messages; the ones this process created are kept whole so a commit needs no read. */
  readonly prep = new Map<string, Message | null>();
  readonly que = new QueIndex();
  readonly run = new Map<string, RunEntry>();
  /** Messages folded into a running one (spec §3.5): on disk in que/, hidden from the index. */
  readonly coalesced = new Map<string, Message>();
  readonly counts = { done: 0, relayed: 0, err: 0 };
  config: QueueConfig;
  private readonly now: () => number;
  private readonly startedAt: number;
  private wakeTimer: NodeJS.Timeout | null = null;
  private wakeAt = Infinity;
  private scriptWatcher: fs.FSWatcher | null = null;
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Entries holding a worker slot: starting or with a live script. A finished script's
   * completion (durable moves) runs while the next message already starts.
   */
  private active = 0;
  private readonly log: Logger;

  constructor(private readonly deps: QueueDeps) {
    this.config = deps.config;
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
    this.log = deps.log;
    this.spool = new QueueSpool(deps.root, deps.config.name, { host: deps.host, now: this.now, blanks: BLANKS });
    this.admin = new AdminState(this.spool.paths, () => this.pump());
  }

  get name(): string {
    return this.config.name;
  }

  uptime(): number {
    return Math.floor((this.now() - this.startedAt) / 1000);
  }

  fullId(id: string): string {
    return this.spool.fullId(id);
  }

  private markReady!: () => void;
  /** Resolves when the recovery scan has loaded the queue; commands other than ping/status wait for it. */
  readonly ready = new Promise<void>((r) => (this.markReady = r));

  /** Recovery scan, counts, watches; then the first dispatch. */
  async start(): Promise<void> {
    const rec = await this.spool.recover(async (id, dir) => {
      const killed = await killStaleScript(dir, id);
      if (killed.length) this.log.warn({ msg_id: id, pids: killed }, 'killed script left by a previous queue process');
    });
    for (const id of rec.prep) this.prep.set(id, null);
    for (const m of rec.que) this.que.insert(m);
    this.counts.done = await this.spool.count('done');
    this.counts.relayed = await this.spool.count('relayed');
    this.counts.err = await this.spool.count('err');
    if (rec.requeued.length) this.log.info({ ids: rec.requeued }, 'interrupted messages returned to que');
    if (rec.broken.length) this.log.error({ ids: rec.broken }, 'messages with unreadable msg moved to err');
    this.admin.watch();
    this.markReady();
    this.pump();
  }

  reconfigure(config: QueueConfig): void {
    this.config = config;
    this.log.info({ config }, 'config reloaded');
    this.pump();
  }

  // ---- dispatcher ------------------------------------------------------------------------

  /** Starts every runnable message the limits allow; arms one timer for the earliest future due. */
  pump(): void {
    if (this.stopping) return;
    while (this.admin.status === 'UP' && this.active < this.config.num_workers) {
      const next = this.pickNext();
      if (!next) break;
      const dueMs = Number(next.due) * 1000;
      if (dueMs > this.now()) {
        this.armWake(dueMs);
        break;
      }
      this.que.remove(next.msg_id);
      const p = this.runMessage(next);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }
  }

  private pickNext(): Message | undefined {
    const keys = this.config.blocking_params;
    if (!keys.length || this.active === 0) return this.que.peek();
    const busy = new Set([...this.run.values()].filter((e) => !e.released).map((e) => paramKey(e.msg, keys)));
    return this.que.find((m) => !busy.has(paramKey(m, keys)));
  }

  private armWake(dueMs: number): void {
    if (this.wakeTimer && this.wakeAt <= dueMs) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = dueMs;
    // setTimeout clamps to 2^31-1 ms; a later due simply re-arms when this fires.
    const delay = Math.min(Math.max(0, dueMs - this.now()), 2 ** 31 - 1);
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      this.wakeAt = Infinity;
      this.pump();
    }, delay);
    this.wakeTimer.unref();
  }

  private async runMessage(msg: Message): Promise<void> {
    const id = msg.msg_id;
    const entry: RunEntry = { msg, dir: null, script: null, completion: null, jobStatus: null, status: null, pending: new Set(), dups: [], startedAt: this.now(), released: false };
    this.run.set(id, entry);
    this.active++;
    this.coalesce(entry);
    const log = this.log.child({ msg_id: id });
    try {
      // The start is synchronous: rename, history line, mkdir, realpath and access are each a few
      // microseconds, while a thread-pool round trip per step would add up in commit-to-start latency.
      entry.dir = this.spool.moveNow(id, 'que', 'run', { actor: 'dispatcher' });
      const jobDir = path.join(entry.dir, 'job');
      fs.mkdirSync(jobDir, { recursive: true });
      const script = resolveScript(this.deps.root, this.config.script);
      if (!script.ok) {
        await this.scriptError(entry, script.reason);
        return;
      }
      if (this.admin.scriptError) {
        this.log.info('script usable again: SCRIPTERROR cleared');
        this.admin.scriptError = null;
      }
      const dir = entry.dir;
      entry.status = new LatestWriter((text) => this.spool.writeStatus(dir, text));
      entry.script = startScript({
        argv: execArgv(this.config.exec_prefix, script.path),
        env: scriptEnv({
          msg,
          fullId: this.fullId(id),
          queue: this.name,
          script: this.config.script,
          realScript: script.path,
          jobDir,
          hostUrl: hostUrl(this.deps.host),
          port: this.deps.host.port,
          envVars: this.config.env_vars,
          baseEnv: this.deps.baseEnv,
        }),
        jobDir,
        onLine: (line) => this.onLine(entry, line),
      }, this.deps.launch);
      log.info({ pid: entry.script.pid, script: script.path }, 'script started');
      if (entry.script.pid > 0) fs.writeFileSync(path.join(dir, 'pid'), String(entry.script.pid));
      const exit = await entry.script.finished;
      this.release(entry);
      await this.complete(entry, exit, log);
    } catch (err) {
      log.error({ err }, 'run failed');
      await this.failRun(entry, `rq internal error: ${(err as Error).message}`).catch((e) => log.error({ err: e }, 'could not move message to err'));
    } finally {
      this.release(entry);
      this.run.delete(id);
      this.pump();
    }
  }

  private release(entry: RunEntry): void {
    if (entry.released) return;
    entry.released = true;
    this.active--;
    this.pump();
  }

  /** The script is missing or not executable: back to que, queue SCRIPTERROR until it is fixed. */
  private async scriptError(entry: RunEntry, reason: string): Promise<void> {
    const id = entry.msg.msg_id;
    this.log.error({ msg_id: id, reason }, 'SCRIPTERROR');
    this.admin.scriptError = reason;
    this.spool.moveNow(id, 'run', 'que', { actor: 'dispatcher', reason: `script error: ${reason}` });
    this.releaseDups(entry);
    this.que.insert(entry.msg);
    this.watchScript();
  }

  /** Watches the script's directory so fixing the script (chmod, deploy) clears SCRIPTERROR at once. */
  private watchScript(): void {
    if (this.scriptWatcher) return;
    const target = path.resolve(this.deps.root, this.config.script);
    let dir = path.dirname(target);
    while (!fs.existsSync(dir)) dir = path.dirname(dir);
    try {
      this.scriptWatcher = fs.watch(dir, { persistent: false }, () => void this.recheckScript());
      this.scriptWatcher.on('error', () => undefined);
    } catch (err) {
      this.log.warn({ err, dir }, 'cannot watch the script directory; SCRIPTERROR clears on the next status request');
    }
  }

  /** Clears SCRIPTERROR when the script has become usable. Called by the watcher and by status requests. */
  async recheckScript(): Promise<void> {
    if (!this.admin.scriptError) return;
    const s = resolveScript(this.deps.root, this.config.script);
    if (!s.ok) return;
    this.log.info('script usable again: SCRIPTERROR cleared');
    this.admin.scriptError = null;
    this.scriptWatcher?.close();
    this.scriptWatcher = null;
    this.pump();
  }

  private onLine(entry: RunEntry, line: string): void {
    const pl = parseLine(line);
    entry.jobStatus = pl.arg;
    entry.status?.set(pl.arg);
    if (pl.keyword === 'dup') {
      this.track(entry, this.dup(entry, pl.arg).then((reply) => entry.script?.reply(reply)));
      return;
    }
    const c = completionOf(pl);
    if (!c || entry.completion) return;
    entry.completion = c;
    if (c.kind === 'resend') {
      const msg = entry.msg;
      msg.count = (Number(msg.count) || 0) + 1;
      msg.due = Math.floor(this.now() / 1000) + c.delay;
      const dir = entry.dir!;
      this.track(entry, Promise.all([this.spool.writeMessage('run', msg.msg_id, msg), fsp.writeFile(path.join(dir, 'resend'), '')]));
    }
  }

  private track(entry: RunEntry, p: Promise<unknown>): void {
    const guarded = p.catch((err) => this.log.error({ err, msg_id: entry.msg.msg_id }, 'pipe command failed'));
    entry.pending.add(guarded);
    void guarded.finally(() => entry.pending.delete(guarded));
  }

  private async complete(entry: RunEntry, exit: ExitInfo, log: Logger): Promise<void> {
    await Promise.all([...entry.pending]);
    await entry.status?.flush();
    const id = entry.msg.msg_id;
    if (this.stopping) {
      this.spool.appendHistory(entry.dir!, { from: 'run', to: 'run', actor: 'shutdown', reason: 'interrupted' });
      log.info('script stopped by shutdown; message stays in run/ until the queue restarts');
      return;
    }
    const msg = entry.msg;
    const outcome = exit.spawnError
      ? { state: 'err' as const, statusText: `could not start script: ${exit.spawnError}` }
      : decideOutcome(entry.completion, entry.script!.pid, exit.code, exit.signal, Number(msg.count) || 0, Number(msg.max_count) || 0);
    const dir = entry.dir!;
    if (outcome.statusText !== null) {
      entry.jobStatus = outcome.statusText;
      await this.spool.writeStatus(dir, outcome.statusText, true);
    }
    await fsp.rm(path.join(dir, 'pid'), { force: true });
    const reason = `exit ${exit.signal ?? exit.code}${outcome.statusText ? `: ${outcome.statusText}` : ''}`;
    log.info({ state: outcome.state, code: exit.code, signal: exit.signal, ms: this.now() - entry.startedAt }, 'script finished');
    if (outcome.state === 'que') {
      const delay = entry.completion?.kind === 'resend' ? entry.completion.delay : 0;
      msg.due = Math.floor(this.now() / 1000) + delay;
      await this.spool.writeMessage('run', id, msg);
      // The in-memory state follows the rename at once, so nobody sees `run` with a stale path.
      await this.spool.move(id, 'run', 'que', {
        actor: 'script',
        reason: `resend ${delay}`,
        onRenamed: () => {
          this.run.delete(id);
          this.releaseDups(entry);
          this.que.insert(msg);
        },
      });
      return;
    }
    if (outcome.state === 'done' || outcome.state === 'relayed') {
      await this.finaliseDups(entry, outcome.state);
    } else {
      this.releaseDups(entry);
    }
    await this.spool.move(id, 'run', outcome.state, { actor: 'script', reason, onRenamed: () => this.run.delete(id) });
    this.counts[outcome.state]++;
    await this.fireWebhooks(msg, outcome.state);
  }

  /** Moves a message whose run could not proceed to err with a status saying why. */
  private async failRun(entry: RunEntry, text: string): Promise<void> {
    const id = entry.msg.msg_id;
    this.releaseDups(entry);
    const from: State = entry.dir ? 'run' : 'que';
    await this.spool.writeStatus(this.spool.msgDir(from, id), text, true);
    await this.spool.move(id, from, 'err', { actor: 'rq', reason: text });
    this.counts.err++;
  }

  // ---- coalescing (spec §3.5) ------------------------------------------------------------

  private coalesce(entry: RunEntry): void {
    const keys = this.config.coalesce_params;
    if (!keys.length) return;
    const key = paramKey(entry.msg, keys);
    for (const m of [...this.que.values()]) {
      if (paramKey(m, keys) !== key) continue;
      this.que.remove(m.msg_id);
      m.dup = this.fullId(entry.msg.msg_id);
      this.coalesced.set(m.msg_id, m);
      entry.dups.push(m);
    }
    if (entry.dups.length) entry.msg.dups = entry.dups.map((m) => m.msg_id);
  }

  private releaseDups(entry: RunEntry): void {
    for (const m of entry.dups) {
      delete m.dup;
      this.coalesced.delete(m.msg_id);
      this.que.insert(m);
    }
    if (entry.dups.length) delete entry.msg.dups;
    entry.dups = [];
  }

  private async finaliseDups(entry: RunEntry, state: 'done' | 'relayed'): Promise<void> {
    if (!entry.dups.length) return;
    const parent = this.fullId(entry.msg.msg_id);
    for (const m of entry.dups) {
      const dir = this.spool.msgDir('que', m.msg_id);
      await this.spool.writeStatus(dir, `duplicate ${parent}`, true);
      await this.spool.writeMessage('que', m.msg_id, m);
      await this.spool.move(m.msg_id, 'que', state, { actor: 'coalesce', reason: `duplicate ${parent}` });
      this.coalesced.delete(m.msg_id);
      this.counts[state]++;
    }
    entry.msg.dups = entry.dups.map((m) => this.fullId(m.msg_id));
    await this.spool.writeMessage('run', entry.msg.msg_id, entry.msg);
  }

  // ---- dup and webhooks ------------------------------------------------------------------

  /** Handles `dup <delay>-<flag>-<dest>` and returns the one reply line for fd 4. */
  private async dup(entry: RunEntry, arg: string | null): Promise<string> {
    const req = parseDup(arg);
    if (!req) return `fail dup failed - expected <delay>-<flag>-<dest>, received ${JSON.stringify(arg)}`;
    const target = req.dest.startsWith('http') ? 'relay' : req.dest;
    if (!isValidQueueName(target) || !fs.existsSync(path.join(this.deps.root, 'queues', target))) return `fail couldn't connect to queue - ${target}`;
    const m = entry.msg;
    // force_remote is not carried by a dup (spec §4.6).
    const fields = { ...pickFields(m, DUP_FIELDS), dest: req.dest, count: 0, due: Math.floor(this.now() / 1000) + req.delay };
    const names = await attachmentNames(entry.dir!);
    try {
      if (target === this.name) {
        const copy = await this.spool.createWithAttachments(fields, names.length ? entry.dir! : null);
        this.que.insert(copy);
        this.pump();
        return `ok ${this.fullId(copy.msg_id)}`;
      }
      return await this.dupToPeer(target, fields, names.map((n) => path.join(entry.dir!, 'attach', n)));
    } catch (err) {
      return `fail dup failed - ${(err as Error).message}`;
    }
  }

  private async dupToPeer(target: string, fields: CreateFields, files: string[]): Promise<string> {
    const call = async (command: string, arg: unknown, stage: string): Promise<string> => {
      const reply = await this.deps.peer(target, command, arg);
      if (Array.isArray(reply) && reply[0] === 'ok') return String(reply[1]);
      const text = Array.isArray(reply) ? String(reply[1]) : JSON.stringify(reply);
      throw new Error(stage ? `${stage} fail ${text}` : text);
    };
    if (!files.length) return `ok ${await call('create_message', fields, '')}`;
    const full = await call('prep_message', fields, 'prep');
    const id = full.slice(full.lastIndexOf('/') + 1);
    for (const f of files) await call('attach_message', { msg_id: id, pathname: f }, 'attach');
    await call('commit_message', { msg_id: id }, 'commit');
    return `ok ${full}`;
  }

  private async fireWebhooks(msg: Message, state: State): Promise<void> {
    const urls = msg.post_run_webhook;
    if (!Array.isArray(urls) || urls.length === 0) return;
    const body: Record<string, unknown> = { ...msg, msg_id: this.fullId(msg.msg_id), state };
    delete body.status;
    delete body._attachments;
    for (const url of urls) {
      try {
        const reply = await this.deps.peer('webhook', 'create_message', { dest: 'webhook', param1: url, param2: JSON.stringify(body) });
        if (!Array.isArray(reply) || reply[0] !== 'ok') this.log.warn({ url, reply }, 'webhook queue refused the webhook message');
      } catch (err) {
        this.log.warn({ url, err: (err as Error).message }, 'webhook not sent: no webhook queue answered');
      }
    }
  }

  // ---- operations used by the socket commands ------------------------------------------

  /** Where a message is: memory first (prep, que, run), then the disk (done, relayed, err). */
  async locate(id: string): Promise<Located | null> {
    if (this.prep.has(id)) return { state: 'prep', dir: this.spool.msgDir('prep', id) };
    if (this.que.has(id) || this.coalesced.has(id)) return { state: 'que', dir: this.spool.msgDir('que', id) };
    const entry = this.run.get(id);
    if (entry) return { state: 'run', dir: entry.dir ?? this.spool.msgDir('que', id) };
    for (const s of ['done', 'relayed', 'err'] as const) {
      if (await this.spool.exists(s, id)) return { state: s, dir: this.spool.msgDir(s, id) };
    }
    return null;
  }

  /** A message dir relative to the root, as the `path` field shows it. */
  relPath(dir: string): string {
    return path.relative(this.deps.root, dir);
  }

  /** The message with its derived fields (spec §2.3), read fresh. */
  async view(id: string, where: Located): Promise<Message> {
    const mem = this.que.get(id) ?? this.coalesced.get(id) ?? this.run.get(id)?.msg;
    const msg: Message = mem ? { ...mem } : await this.spool.readMessage(where.state, id);
    const status = await this.jobStatus(id, where);
    msg.path = this.relPath(where.dir);
    msg.status = statusText(where.state, status);
    msg.state = where.state;
    delete msg._attachments;
    const attachments = await this.spool.attachments(where.state, id);
    if (Object.keys(attachments).length) msg._attachments = attachments;
    return msg;
  }

  async jobStatus(id: string, where: Located): Promise<{ job_status: string | null } | null> {
    const entry = this.run.get(id);
    if (entry && entry.script) return { job_status: entry.jobStatus };
    try {
      const parsed = JSON.parse(await fsp.readFile(path.join(where.dir, 'status'), 'utf8')) as { job_status?: unknown };
      return { job_status: typeof parsed.job_status === 'string' ? parsed.job_status : null };
    } catch {
      return null;
    }
  }

  /**
   * Creates a message. A committed one becomes runnable the moment its directory is renamed into
   * que/ — the dispatcher may start it while the fsyncs run — but the caller's `ok` still waits
   * for them (QueueSpool.create).
   */
  async create(fields: CreateFields, commit: boolean): Promise<Message> {
    if (!commit) {
      const msg = await this.spool.create(fields, { commit: false });
      this.prep.set(msg.msg_id, msg);
      void this.spool.stageRun(this.spool.msgDir('prep', msg.msg_id));
      return msg;
    }
    let visible: Message | null = null;
    try {
      const msg = await this.spool.create(fields, {
        commit: true,
        onRenamed: (m) => {
          visible = m;
          this.que.insert(m);
          this.pump();
        },
      });
      if (this.que.has(msg.msg_id)) void this.spool.stageRun(this.spool.msgDir('que', msg.msg_id));
      // Started during the create's fsyncs: the que → run rename is not fsynced on its own (recovery
      // re-queues from run/ anyway), so the `ok` also waits for run/ to hold it durably.
      else if (this.run.has(msg.msg_id)) await this.spool.dirSync.sync(this.spool.paths.state.run);
      return msg;
    } catch (err) {
      if (visible) this.que.remove((visible as Message).msg_id);
      throw err;
    }
  }

  async commit(id: string): Promise<boolean> {
    if (!this.prep.has(id)) return false;
    const known = this.prep.get(id);
    this.prep.delete(id);
    try {
      const msg = known ?? (await this.spool.readMessage('prep', id));
      await this.spool.commit(id, () => {
        this.que.insert(msg);
        this.pump();
      });
    } catch (err) {
      if (!this.que.has(id) && !this.run.has(id) && (await this.spool.exists('prep', id))) this.prep.set(id, known ?? null);
      throw err;
    }
    return true;
  }

  /** Deletes a message in prep, que, err (acked too), done or relayed. */
  async remove(id: string, where: Located): Promise<void> {
    const prepMsg = this.prep.get(id) ?? null;
    if (where.state === 'prep') this.prep.delete(id);
    if (where.state === 'que') {
      if (this.coalesced.has(id)) throw new Error('msg is coalesced into a running message');
      this.que.remove(id);
    }
    try {
      await this.spool.remove(where.state, id);
    } catch (err) {
      if (where.state === 'prep') this.prep.set(id, prepMsg);
      if (where.state === 'que') this.que.insert(await this.spool.readMessage('que', id));
      throw err;
    }
    if ((where.state === 'done' || where.state === 'relayed' || where.state === 'err') && !id.startsWith('.')) this.counts[where.state]--;
  }

  /** SIGTERM to the script's process group; KILL after the grace if it is still there. */
  destroy(id: string): boolean {
    const script = this.run.get(id)?.script;
    if (!script) return false;
    script.kill('SIGTERM');
    const t = setTimeout(() => script.kill('SIGKILL'), this.deps.killGraceMs ?? 10_000);
    t.unref();
    void script.finished.then(() => clearTimeout(t));
    return true;
  }

  /** Brings a queued message to the front: due := min(now, smallest due − 1). */
  async runNow(id: string): Promise<void> {
    const msg = this.que.get(id)!;
    const min = this.que.minDue() ?? Infinity;
    msg.due = Math.min(Math.floor(this.now() / 1000), min - 1);
    this.que.insert(msg);
    await this.spool.writeMessage('que', id, msg);
    this.pump();
  }

  async clone(id: string, where: Located): Promise<Message> {
    const old = await this.spool.readMessage(where.state, id);
    // The old due is kept, so the clone is due at once (spec §3.7).
    const fields = { ...pickFields(old, CLONE_FIELDS), count: 0 };
    const names = await attachmentNames(where.dir);
    const msg = await this.spool.createWithAttachments(fields, names.length ? where.dir : null, { cloned_from: id });
    this.que.insert(msg);
    this.pump();
    return msg;
  }

  async ackErrs(): Promise<number> {
    const n = await this.spool.ackErrs();
    this.counts.err = Math.max(0, this.counts.err - n);
    return n;
  }

  /** Text of a running message's status for `messages run`. */
  runStatus(id: string): string {
    const e = this.run.get(id);
    return e ? statusText('run', e.script ? { job_status: e.jobStatus } : null) : 'run';
  }

  /**
   * Stops: no new starts, running scripts' groups get TERM then KILL after the grace. Their
   * messages stay in run/; the next start returns them to que (at-least-once).
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.admin.close();
    this.scriptWatcher?.close();
    const running = [...this.run.values()].filter((e) => e.script);
    for (const e of running) e.script!.kill('SIGTERM');
    const grace = setTimeout(() => running.forEach((e) => e.script!.kill('SIGKILL')), this.deps.killGraceMs ?? 5000);
    await Promise.all(this.inFlight);
    clearTimeout(grace);
    await this.spool.close();
  }
}

function paramKey(m: Message, keys: number[]): string {
  return JSON.stringify(keys.map((k) => m[`param${k}`] ?? null));
}
