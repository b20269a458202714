// The life of one run: que → run, the script started and listened to, then its end decided and the message moved on.
import type { Logger } from 'pino';
import type { QueueConfig } from '../../config/queue-config.js';
import { type HostInfo, hostUrl } from '../../message/message-id.js';
import type { Message } from '../../message/message.js';
import type { TraceContext } from '../../message/trace-context.js';
import { markShutdown } from '../../spool/message-files.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { AdminState } from '../status/admin-state.js';
import { type RunEndSpool, isNoSpace } from '../status/disk-full.js';
import { stoppedShort } from './stopped-short.js';
import type { DupDeps } from './dup.js';
import type { MessageIndex } from '../index/message-index.js';
import type { QueueEvents } from '../status/queue-events.js';
import { onRunLine } from './run-lines.js';
import { attemptOf, failuresOf } from '../rules/retry-policy.js';
import { decideRunEnd } from '../rules/run-end.js';
import type { RunMoves } from '../transitions/run-moves.js';
import { RunDeadlines } from '../rules/run-deadlines.js';
import { type RunPolicy, killGraceOf, runPolicy } from '../launch/run-policy.js';
import { KILL_GRACE_MS, ScriptRun } from '../launch/script-run.js';
import { type ExitInfo, type Launcher, type RunningScript, execArgv, startScript } from '../launch/script-runner.js';
import { scriptEnv } from '../launch/script-env.js';
import { type Refusal, StartGuard, errnoCode, refusalOf, startRefusal, vanishedStart } from '../rules/start-refusal.js';
import type { HistoryEntry } from '../../spool/queue-spool.js';

export interface RunsDeps {
  host: HostInfo;
  config: () => QueueConfig;
  spool: QueueSpool;
  index: Pick<MessageIndex, 'counts' | 'allRuns' | 'run'>;
  moves: RunMoves;
  /** The spool as a run's end writes it: on a full disk each write waits for space (DISK FULL) rather than failing the run. */
  ends: RunEndSpool;
  admin: AdminState;
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
  /** The trace context a run's script continues: the message's own, or its run span's when rq exports spans. */
  runTrace?: (msg: Message, startMs: number) => TraceContext;
  /** Uniform in [0, 1): the retry jitter (§B3.2); seeded in tests. */
  random?: () => number;
}

/** The `exit` of the history line that ends a run (§B14), and what the run used where that is known. */
function exitDetails(exit: ExitInfo, wallMs: number): Record<string, unknown> {
  return {
    exit: { code: exit.code, signal: exit.signal, wall_ms: wallMs },
    ...(exit.usage ? { usage: exit.usage } : {}),
    ...(exit.unenforced ? { limits_unenforced: exit.unenforced } : {}),
  };
}

export class Runs {
  /** Holds dispatch after a refused start (the dispatcher asks it) and retries. */
  readonly guard: StartGuard;

  constructor(private readonly d: RunsDeps) {
    this.guard = new StartGuard({ admin: d.admin, log: d.log, pump: d.pump, running: () => d.index.counts().run });
  }

  /** At shutdown: no more retries, and every script's group signalled. */
  stop(): void {
    this.guard.close();
    for (const run of this.d.index.allRuns()) run.stop();
  }

  /** Runs `msg`, already out of the que, to its end; never rejects. */
  async run(msg: Message): Promise<void> {
    const { spool, moves } = this.d;
    // Checked before the message leaves que/: a start short of fds costs it nothing, not even a history line.
    const short = this.guard.headroom();
    if (short) return this.notNow(msg, short);
    const config = this.d.config();
    const startMs = this.d.now();
    const run = new ScriptRun(msg, this.d.log.child({ msg_id: msg.msg_id }), startMs, killGraceOf(config, this.d.killGraceMs ?? KILL_GRACE_MS));
    moves.begin(run);
    try {
      const dir = moves.start(run);
      const attempt = attemptOf(msg);
      const started = (pid?: number) => ({ from: 'que' as const, to: 'run' as const, actor: 'dispatcher', ...(pid ? { pid } : {}), attempt });
      const jobDir = spool.makeJobDir(dir);
      const script = this.d.admin.resolveScript();
      if (!script.ok) return this.refuse(run, started(), { kind: 'script', code: 'ENOENT', text: script.reason });
      const argv = execArgv(config.exec_prefix, script.path);
      const policy = runPolicy(msg, config, jobDir, run.killGraceMs, startMs, this.d.runTrace?.(msg, startMs));
      let running: RunningScript;
      try {
        running = startScript(
          {
            msgId: run.id,
            argv,
            // No exec_prefix: argv[0] is the script, which resolveScript has just found an executable file.
            ...(argv.length === 1 ? { file: script.path } : {}),
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
              baseEnv: this.d.baseEnv,
              runEnv: policy.env,
            }),
            jobDir,
            onLine: (line) => onRunLine(this.d, run, line),
            output: policy.output,
            log: run.log,
            leftoverGraceMs: run.killGraceMs,
            ...(policy.runLimits ? { limits: policy.runLimits } : {}),
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
      // A status line the disk refused is lost until the end writes it (`statusLost`), and holds the queue DISK FULL meanwhile.
      run.began(running, (text) => spool.writeStatus(dir, text).catch((err) => Promise.reject(this.d.admin.disk.noted(`status of ${run.id}`, err))));
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
      if (await stoppedShort(run.id, run.log, err, this.d)) return;
      run.log.error({ err }, 'run failed');
      await this.d.moves.fail(run, `rq internal error: ${(err as Error).message}`).catch((e) => run.log.error({ err: e }, 'could not move message to err'));
    } finally {
      this.release(run);
      moves.ended(run);
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
    this.d.moves.backToQue(run, r.text);
  }

  /** The pid file lets a later queue process find a script this one left; a full disk costs it, not the running script. */
  private writePid(run: ScriptRun, pid: number): void {
    try {
      this.d.spool.writePid(run.dir!, pid);
    } catch (err) {
      if (!isNoSpace(err)) throw err;
      run.log.warn({ err: (err as Error).message }, 'pid file not written: a crash of the queue process now would leave this script running');
      this.d.admin.disk.waitForRoom(`pid of ${run.id} (a script started)`, err as Error);
    }
  }

  /** The start found no space (its run files): DISK FULL holds the queue, and the message waits in the que, not started. */
  private noRoomToStart(run: ScriptRun, err: Error): void {
    run.log.warn({ err: err.message }, 'script not started: no space on the disk; the message goes back to the que');
    this.d.admin.disk.waitForRoom(`start of ${run.id} (its run files)`, err);
    try {
      this.d.moves.backToQue(run, 'disk full');
    } catch (e) {
      run.log.error({ err: e }, 'message left in run/ (no space to move it back); the next start of the queue returns it to the que');
    }
  }

  /** Refused before leaving que/: the message goes back to the index and its worker slot is free. */
  private notNow(msg: Message, r: Refusal): void {
    this.guard.refused(r);
    this.d.moves.notStarted(msg);
    this.d.released(msg.msg_id);
  }

  /** The script has been reaped: one decision from the run's facts (rules/run-end.ts), then one move. */
  private async end(run: ScriptRun, exit: ExitInfo, policy: RunPolicy): Promise<void> {
    await run.settled();
    // The OOM killer (the run's memory cgroup counted a kill) ended the script, or a child before the script said how its run ended (a wrapper exiting 137): a failure of its own. A script that went on to report its end ends as it says.
    if (exit.oom && (exit.signal === 'SIGKILL' || !run.completion) && !run.killed) run.killed = { kind: 'oom', text: exit.oom };
    const { moves, events } = this.d;
    const dir = run.dir!;
    const msg = run.msg;
    const end = decideRunEnd({
      stopping: this.d.stopping(),
      completion: run.completion,
      pid: run.script!.pid,
      code: exit.code,
      signal: exit.signal,
      ...(exit.spawnError ? { spawnError: exit.spawnError } : {}),
      count: Number(msg.count) || 0,
      maxCount: Number(msg.max_count) || 0,
      killed: run.killed,
      jobStatus: run.jobStatus,
      cancel: run.cancel,
      failures: failuresOf(msg),
      retry: policy.retry,
      random: (this.d.random ?? Math.random)(),
    });
    if (end.kind === 'interrupted') {
      // Only a queue that limits interrupts tells a stop from a crash (rq-beyond §B13); a classic one gets no extra file.
      if (this.d.config().max_interrupts !== undefined) await markShutdown(dir, this.d.spool.fs);
      this.d.spool.appendHistory(dir, { from: 'run', to: 'run', actor: 'shutdown', reason: 'interrupted' });
      run.log.info('script stopped by shutdown; message stays in run/ until the queue restarts');
      events.emit('interrupted', { id: run.id });
      return;
    }
    const ms = this.d.now() - run.startedAt;
    const details = exitDetails(exit, ms);
    const done = { code: exit.code, signal: exit.signal, ms, ...(exit.usage ? { usage: exit.usage } : {}) };
    await this.d.ends.removePid(dir);
    if (end.kind === 'cancelled') {
      const cancel = run.cancel!;
      run.jobStatus = end.status;
      run.log.info({ by: cancel.by }, end.status);
      await moves.toErr(run, { status: end.status, outcome: 'cancelled', fields: { cancel }, actor: cancel.by, details, purge: end.purge });
      if (end.purge) events.emit('removed', { id: run.id, state: 'run' });
      else events.emit('finished', { msg, outcome: { state: 'err', statusText: end.status }, ...done });
      return;
    }
    if (end.kind === 'retry' || end.kind === 'failed') {
      const status = end.kind === 'retry' ? end.decision.status : end.status;
      const state = end.kind === 'retry' ? 'que' : 'err';
      run.jobStatus = status;
      // A failure is worth an operator's look whether it is retried or not: warn, not info.
      run.log.warn({ state, failure: end.failure.kind, code: exit.code, signal: exit.signal, ms }, status);
      if (end.kind === 'retry') await moves.retry(run, end.failure, end.decision, details);
      else await moves.toErr(run, { status, outcome: end.outcome, failure: end.failure, actor: 'script', details });
      events.emit('finished', { msg, outcome: { state, statusText: status, failure: end.failure.kind }, ...done });
      return;
    }
    if (end.cancelTooLate) this.d.spool.appendHistory(dir, { event: 'cancel_too_late', actor: run.cancel!.by });
    const outcome = end.kind === 'resend' ? { state: 'que' as const, statusText: end.status } : end.outcome;
    if (outcome.statusText !== null) run.jobStatus = outcome.statusText;
    // Else the script's last text (`done - wrote`) is the final status: one its run could not write waits for room now.
    if (outcome.statusText !== null || run.statusLost) await this.d.ends.writeStatus(dir, run.jobStatus, true);
    // A run ending in err is a failure; one filtering the log at warn must still see it.
    run.log[outcome.state === 'err' ? 'warn' : 'info']({ state: outcome.state, code: exit.code, signal: exit.signal, ms }, 'script finished');
    if (end.kind === 'resend') await moves.resend(run, end.delay, details);
    else
      await moves.finish(
        run,
        end.outcome.state as 'done' | 'relayed' | 'err',
        `exit ${exit.signal ?? exit.code}${outcome.statusText ? `: ${outcome.statusText}` : ''}`,
        details,
      );
    // A classic completion's text is the status its line set (`done all good` → `all good`): the event says it too.
    events.emit('finished', { msg, outcome: { ...outcome, statusText: outcome.statusText ?? run.jobStatus }, ...done });
  }
}
