// One run of the queue script for one message: its handle, status text, pending writes, folded duplicates and its kill.
import type { Logger } from 'pino';
import type { CancelRecord, Message } from '../../message/message.js';
import type { Completion } from '../rules/completion.js';
import type { RunDeadlines } from '../rules/run-deadlines.js';
import type { RunningScript } from './script-runner.js';
import { LatestWriter } from './status-writer.js';

/** Between TERM and KILL, for a destroy and for a shutdown alike. */
export const KILL_GRACE_MS = 10_000;

export class ScriptRun {
  /** run/<id> once the rename has happened. */
  dir: string | null = null;
  script: RunningScript | null = null;
  completion: Completion | null = null;
  jobStatus: string | null = null;
  /** Messages coalesced into this one (spec §3.5). */
  dups: Message[] = [];
  /** The script has exited (or never started): the run no longer holds a worker slot. */
  released = false;
  /** Why rq killed the script, and the failure text it leads to (rq-beyond §B10, §B11; destroy). */
  killed: { kind: 'timeout' | 'stalled' | 'destroyed' | 'oom'; text: string | null } | null = null;
  /** A cancel asked while it runs (rq-beyond §B5): its marker is on disk, the script has had TERM. */
  cancel: CancelRecord | null = null;
  /** The write of the cancel marker, for a second cancel to wait on. */
  cancelWritten: Promise<void> = Promise.resolve();
  /** Epoch ms of its last line on fd 3 (any keyword renews it), or null. */
  lastLine: number | null = null;
  /** Its timeout and heartbeat clocks, when it has any. */
  deadlines: RunDeadlines | null = null;
  readonly startedAt: number;
  /** Resolves when the run is over and its message has left run/ (or stayed, at a shutdown). */
  readonly ended: Promise<void>;
  /** Called once by Runs when the run is over. */
  markEnded!: () => void;
  private status: LatestWriter | null = null;
  /** Writes that must land before the message leaves run/ (resend msg, dup copies). */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    readonly msg: Message,
    readonly log: Logger,
    now: number,
    readonly killGraceMs = KILL_GRACE_MS,
  ) {
    this.startedAt = now;
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
  }

  get id(): string {
    return this.msg.msg_id;
  }

  /** The script is running: its status lines go to `writeStatus`, latest text wins. */
  began(script: RunningScript, writeStatus: (text: string | null) => Promise<void>): void {
    this.script = script;
    this.status = new LatestWriter(writeStatus);
  }

  setStatus(text: string | null): void {
    this.jobStatus = text;
    this.status?.set(text);
  }

  /** A write the run's completion must wait for; its failure is logged, not thrown. */
  track(p: Promise<unknown>): void {
    const guarded = p.catch((err) => this.log.error({ err }, 'pipe command failed'));
    this.pending.add(guarded);
    void guarded.finally(() => this.pending.delete(guarded));
  }

  /** Once settled: the latest status text could not be written while the script ran (a full disk), so the run's end must write it. */
  get statusLost(): boolean {
    return this.status?.lost ?? false;
  }

  /** Every tracked write and status text on disk (or its write failed: `statusLost`). */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
    await this.status?.flush();
  }

  /** TERM to the script's group, KILL after the grace if it is still there. False when no script runs. */
  stop(): boolean {
    const script = this.script;
    if (!script) return false;
    script.kill('SIGTERM');
    let killed = false;
    const t = setTimeout(() => {
      killed = true;
      script.kill('SIGKILL');
    }, this.killGraceMs);
    t.unref();
    // Once the leader is reaped, whatever is left of its group survived TERM: KILL it now. Not
    // later: with pids wrapping at 32768, the group id could soon name someone else's group.
    void script.finished.then(() => {
      clearTimeout(t);
      if (!killed) script.kill('SIGKILL');
    });
    return true;
  }
}
