// The life of one run: que → run, the script started and listened to, then its end decided and the message moved on.
import type { Logger } from 'pino';
import type { QueueConfig } from '../../config/queue-config.js';
import { type HostInfo, hostUrl } from '../../message/message-id.js';
import type { Message } from '../../message/message.js';
import { markShutdown } from '../../spool/message-files.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { AdminState } from '../status/admin-state.js';
import type { Coalescer } from '../coordination/coalescing.js';
import { type Outcome, decideOutcome, spawnFailure } from '../rules/completion.js';
import { isNoSpace, roomProbe, spaceWaitingSpool } from '../status/disk-full.js';
import type { DupDeps } from './dup.js';
import { type FailureMoveDeps, endCancelled, exitDetails, failureOf, finishRun, retryRun } from './failure-moves.js';
import type { MessageIndex } from '../index/message-index.js';
import type { QueueEvents } from '../status/queue-events.js';
import { onRunLine } from './run-lines.js';
import { type Decision, attemptOf, decideFailure, failuresOf } from '../rules/retry-policy.js';
import { RunDeadlines } from '../rules/run-deadlines.js';
import { NO_ENV, type RunPolicy, killGraceOf, runPolicy } from '../launch/run-policy.js';
import { KILL_GRACE_MS, ScriptRun } from '../launch/script-run.js';
import { type ExitInfo, type Launcher, type RunningScript, execArgv, scriptEnv, startScript } from '../launch/script-runner.js';
import { type Refusal, StartGuard, errnoCode, refusalOf, startRefusal, vanishedStart } from '../rules/start-refusal.js';
import type { HistoryEntry } from '../../spool/queue-spool.js';

export interface RunsDeps {
  host: HostInfo;
  config: () => QueueConfig;
  spool: QueueSpool;
  index: MessageIndex;
  admin: AdminState;
  coalescer: Coalescer;
  events: QueueEvents;
  dup: DupDeps;
  launch: Launcher;
  baseEnv: NodeJS.ProcessEnv;
  log: Logger;
  now: () => number;
  /** The run's script has exited: its worker slot is free. */
  released: (id: string) => void;
  /** A message went back to the que (resend, SCRIPTERROR): dispatch again. */
  pump: () => void;
  /** The queue is shutting down: a run that ends now was interrupted, not finished. */
  stopping: () => boolean;
  killGraceMs?: number;
  /** Uniform in [0, 1): the retry jitter (§B3.2); seeded in tests. */
  random?: () => number;
}

export class Runs {
  /** What ends a run writes through: on a full disk each write waits for space (DISK FULL) rather than failing the run. */
  private readonly ends: FailureMoveDeps;
  /** Holds dispatch after a refused start (the dispatcher asks it) and retries. */
  readonly guard: StartGuard;

  constructor(private readonly d: RunsDeps) {
    this.ends = { ...d, spool: spaceWaitingSpool(d.spool, d.admin.disk) };
    this.guard = new StartGuard({ admin: d.admin, log: d.log, pump: d.pump, running: () => d.index.counts().run });
  }

  /** At shutdown: no more retries, and every script's group signalled. */
  stop(): void {
    this.guard.close();
    for (const run of this.d.index.allRuns()) run.stop();
  }

  /** Runs `msg`, already out of the que, to its end; never rejects. */
  async run(msg: Message): Promise<void> {
    const { spool, index } = this.d;
    // Checked before the message leaves que/: a start short of fds costs it nothing, not even a history line.
    const short = this.guard.headroom();
    if (short) return this.notNow(msg, short);
    const config = this.d.config();
    const startMs = this.d.now();
    const run = new ScriptRun(msg, this.d.log.child({ msg_id: msg.msg_id }), startMs, killGraceOf(config, this.d.killGraceMs ?? KILL_GRACE_MS));
    index.addRun(run);
    try {
      this.d.coalescer.fold(run);
      // The start is synchronous: rename, history line, mkdir, realpath and access are each a few
      // microseconds, while a thread-pool round trip per step would add up in commit-to-start latency.
      // The que → run line waits for the spawn, so it can say which pid ran which attempt (§B14).
      const dir = spool.moveNow(run.id, 'que', 'run', { actor: 'dispatcher', lineLater: true }).dir;
      run.dir = dir;
      const attempt = attemptOf(msg);
      const started = (pid?: number) => ({ from: 'que' as const, to: 'run' as const, actor: 'dispatcher', ...(pid ? { pid } : {}), attempt });
      const jobDir = spool.makeJobDir(dir);
      const script = this.d.admin.resolveScript();
      if (!script.ok) return this.refuse(run, started(), { kind: 'script', code: 'ENOENT', text: script.reason });
      const policy = runPolicy(msg, config, jobDir, run.killGraceMs, startMs);
      let running: RunningScript;
      try {
        running = startScript(
          {
            msgId: run.id,
            argv: execArgv(config.exec_prefix, script.path),
            env: scriptEnv({
              msg,
              fullId: spool.fullId(run.id),
              queue: config.name,
              script: config.script,
              realScript: script.path,
              jobDir,
              hostUrl: hostUrl(this.d.host),
              port: this.d.host.port,
              envVars: config.env_vars,
              baseEnv: policy.env === NO_ENV ? this.d.baseEnv : { ...this.d.baseEnv, ...policy.env },
            }),
            jobDir,
            onLine: (line) => onRunLine(this.d, run, line),
            output: policy.output,
            log: run.log,
            leftoverGraceMs: run.killGraceMs,
          },
          this.d.launch,
        );
      } catch (err) {
        // stdio.log could not be opened (EMFILE…): not the message's failure either.
        const refusal = refusalOf(errnoCode(err), `could not start script: ${(err as Error).message}`);
        if (!refusal) throw err;
        return this.refuse(run, started(), refusal);
      }
      if (running.pid <= 0) {
        const refusal = startRefusal(await running.finished);
        if (refusal) return this.refuse(run, started(), refusal);
      } else this.guard.started();
      run.began(running, (text) => spool.writeStatus(dir, text));
      const pid = running.pid;
      spool.appendHistory(dir, started(pid > 0 ? pid : undefined));
      run.log.info({ pid, script: script.path }, 'script started');
      this.d.events.emit('started', { msg, pid, script: script.path });
      if (pid > 0) this.writePid(run, pid);
      if (policy.limits.timeout !== undefined || policy.limits.heartbeat !== undefined) {
        run.deadlines = new RunDeadlines(policy.limits, startMs, this.d.now, (e) => {
          spool.appendHistory(dir, e.kind === 'timeout' ? { event: 'timeout', after_s: e.afterS } : { event: 'stall', silent_s: e.afterS });
          run.log.warn({ kind: e.kind, after_s: e.afterS }, e.text);
          run.killed = { kind: e.kind, text: e.text };
          run.stop();
        });
      }
      const exit = await run.script!.finished;
      run.deadlines?.stop();
      this.guard.ended();
      // The gate reports an exec sh could not do only once sh has exited; an interpreter, one it could not open.
      const late = startRefusal(exit) ?? vanishedStart(exit, { saidAnything: run.lastLine !== null, ranMs: this.d.now() - startMs }, script);
      if (late) {
        await spool.removePid(dir);
        return this.refuse(run, null, late);
      }
      this.release(run);
      await this.end(run, exit, policy);
    } catch (err) {
      if (!run.script && isNoSpace(err)) return this.noRoomToStart(run, err as Error);
      run.log.error({ err }, 'run failed');
      await this.fail(run, `rq internal error: ${(err as Error).message}`).catch((e) => run.log.error({ err: e }, 'could not move message to err'));
    } finally {
      this.release(run);
      // A retry or resend with no delay may already run again under the same id: that run stays.
      if (index.run(run.id) === run) index.removeRun(run.id);
      run.markEnded();
      this.d.pump();
    }
  }

  /** SIGTERM to the script's process group, KILL after the grace. False when `id` runs no script. */
  destroy(id: string): boolean {
    const run = this.d.index.run(id);
    if (!run?.script) return false;
    run.killed ??= { kind: 'destroyed', text: null };
    return run.stop();
  }

  private release(run: ScriptRun): void {
    if (run.released) return;
    run.released = true;
    this.d.released(run.id);
  }

  /** The script could not be started: back to que as it came, attempt not counted; the guard holds dispatch and retries. */
  private refuse(run: ScriptRun, started: Omit<HistoryEntry, 'at'> | null, r: Refusal): void {
    if (started && run.dir) this.d.spool.appendHistory(run.dir, started);
    this.guard.refused(r);
    this.backToQue(run, r.text);
  }

  private backToQue(run: ScriptRun, reason: string): void {
    if (run.dir) this.d.spool.moveNow(run.id, 'run', 'que', { actor: 'dispatcher', reason });
    this.d.coalescer.release(run);
    this.d.index.removeRun(run.id);
    this.d.index.enqueue(run.msg);
  }

  /** The pid file lets a later queue process find a script this one left; a full disk costs it, not the running script. */
  private writePid(run: ScriptRun, pid: number): void {
    try {
      this.d.spool.writePid(run.dir!, pid);
    } catch (err) {
      if (!isNoSpace(err)) throw err;
      run.log.warn({ err: (err as Error).message }, 'pid file not written: a crash of the queue process now would leave this script running');
      this.d.admin.disk.waitForRoom('pid file', err as Error, roomProbe(this.d.spool));
    }
  }

  /** The start found no space (its run files): DISK FULL holds the queue, and the message waits in the que, not started. */
  private noRoomToStart(run: ScriptRun, err: Error): void {
    run.log.warn({ err: err.message }, 'script not started: no space on the disk; the message goes back to the que');
    this.d.admin.disk.waitForRoom('script start', err, roomProbe(this.d.spool));
    try {
      this.backToQue(run, 'disk full');
    } catch (e) {
      run.log.error({ err: e }, 'message left in run/ (no space to move it back); the next start of the queue returns it to the que');
    }
  }

  /** Refused before leaving que/: the message goes back to the index and its worker slot is free. */
  private notNow(msg: Message, r: Refusal): void {
    this.guard.refused(r);
    this.d.index.enqueue(msg);
    this.d.released(msg.msg_id);
  }

  /** The script has been reaped: decide the outcome, write the final status, move the message on. */
  private async end(run: ScriptRun, exit: ExitInfo, policy: RunPolicy): Promise<void> {
    await run.settled();
    const { index } = this.d;
    const { spool } = this.ends;
    const dir = run.dir!;
    if (this.d.stopping()) {
      // Only a queue that limits interrupts tells a stop from a crash (rq-beyond §B13); a classic one gets no extra file.
      if (this.d.config().max_interrupts !== undefined) await markShutdown(dir, this.d.spool.fs);
      this.d.spool.appendHistory(dir, { from: 'run', to: 'run', actor: 'shutdown', reason: 'interrupted' });
      run.log.info('script stopped by shutdown; message stays in run/ until the queue restarts');
      this.d.events.emit('interrupted', { id: run.id });
      return;
    }
    const msg = run.msg;
    const classic: Outcome = exit.spawnError
      ? spawnFailure(exit.spawnError)
      : decideOutcome(run.completion, run.script!.pid, exit.code, exit.signal, Number(msg.count) || 0, Number(msg.max_count) || 0);
    if (run.cancel) {
      // Cancelled: err `cancelled`, never retried, unless the script had already finished its work.
      if (classic.state !== 'done' && classic.state !== 'relayed') return endCancelled({ ...this.ends, events: this.d.events }, run, run.cancel, exit);
      this.d.spool.appendHistory(dir, { event: 'cancel_too_late', actor: run.cancel.by });
    }
    const failure = failureOf(run, classic, exit);
    const decision: Decision =
      failure ? decideFailure(failure, failuresOf(msg), policy.retry, (this.d.random ?? Math.random)()) : { action: 'classic' };
    const ms = this.d.now() - run.startedAt;
    const exitLine = exitDetails(exit, ms);
    await spool.removePid(dir);
    if (decision.action !== 'classic') {
      run.jobStatus = decision.status;
      const state = decision.action === 'retry' ? 'que' : 'err';
      // A failure is worth an operator's look whether it is retried or not: warn, not info.
      run.log.warn({ state, failure: failure!.kind, code: exit.code, signal: exit.signal, ms }, decision.status);
      if (decision.action === 'retry') await retryRun(this.ends, run, failure!, decision, exitLine);
      else await finishRun(this.ends, run, { status: decision.status, outcome: decision.outcome, failure: failure!, actor: 'script', details: exitLine });
      this.d.events.emit('finished', { msg, outcome: { state, statusText: decision.status, failure: failure!.kind }, code: exit.code, signal: exit.signal, ms });
      return;
    }
    const outcome = classic;
    if (outcome.statusText !== null) {
      run.jobStatus = outcome.statusText;
      await spool.writeStatus(dir, outcome.statusText, true);
    }
    // A run ending in err is a failure; one filtering the log at warn must still see it.
    run.log[outcome.state === 'err' ? 'warn' : 'info']({ state: outcome.state, code: exit.code, signal: exit.signal, ms }, 'script finished');
    if (outcome.state === 'que') {
      const delay = run.completion?.kind === 'resend' ? run.completion.delay : 0;
      msg.due = Math.floor(this.d.now() / 1000) + delay;
      await spool.writeMessage('run', run.id, msg);
      const moved = await spool.beginMove(run.id, 'run', 'que', { actor: 'script', details: exitLine, reason: `resend ${delay}` });
      // The in-memory state follows the rename at once, so nobody sees `run` with a stale path.
      index.removeRun(run.id);
      this.d.coalescer.release(run);
      index.enqueue(msg);
      await moved.sync();
    } else {
      if (outcome.state === 'err') this.d.coalescer.release(run);
      else await this.d.coalescer.finalise(run, outcome.state);
      const reason = `exit ${exit.signal ?? exit.code}${outcome.statusText ? `: ${outcome.statusText}` : ''}`;
      const moved = await spool.beginMove(run.id, 'run', outcome.state, { actor: 'script', details: exitLine, reason });
      // Memory, counts included, follows the rename at once: a reader who sees the message in its new state sees it counted.
      index.removeRun(run.id);
      index.addFinished(outcome.state, 1);
      await moved.sync();
    }
    this.d.events.emit('finished', { msg, outcome, code: exit.code, signal: exit.signal, ms });
  }

  /** A run that could not proceed: to err with a status saying why. */
  private async fail(run: ScriptRun, text: string): Promise<void> {
    this.d.coalescer.release(run);
    const { spool } = this.ends;
    const from = run.dir ? 'run' : 'que';
    await spool.writeStatus(spool.msgDir(from, run.id), text, true);
    await spool.move(run.id, from, 'err', { actor: 'rq', reason: text });
    this.d.index.addFinished('err', 1);
  }
}
