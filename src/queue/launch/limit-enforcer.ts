// Where a queue's run limits are enforced (cgroup v2 controllers or the host's v1 hierarchies, whichever holds each controller), whether they can be, and each run's limits and accounting.
import path from 'node:path';
import type { Logger } from 'pino';
import { type RunLimits, RUN_LIMIT_FIELDS, effectiveLimits, hasLimits } from '../../message/run-limits.js';
import { ownV1Homes } from './cgroup-v1.js';
import { V2Limits, readV2Usage } from './cgroup-v2-limits.js';
import { diskScheduler } from './disk-scheduler.js';
import { LimitCgroups, type LimitRun } from './limit-cgroups.js';
import type { ExitInfo, LaunchedChild } from './script-runner.js';
import type { RunUsage } from './run-usage.js';

export interface LimitEnforcerOptions {
  /** The queue's cgroup name, the same in every hierarchy. */
  cgroupName: string;
  queueDir: string;
  log: Logger;
  env: NodeJS.ProcessEnv;
}

/** One run's limits as set up: its v1 cgroups, whether its v2 run cgroup has them, what it goes without; or why it may not start. */
export interface RunLimitSetup {
  v1: LimitRun | null;
  /** The run cgroup v2 its limits were written into and its usage is read from, or null. */
  v2: string | null;
  unenforced: string[];
  refused?: string;
}

/** A queue's limits: judged at start and at each reload, and set up for each run. */
export class LimitEnforcer {
  private v1: LimitCgroups | null = null;
  private v2: V2Limits | null = null;
  /** The queue's limits as last judged (its config's), and whether they are best-effort. */
  private queueLimits: RunLimits = {};
  private bestEffort = false;
  /** What a best-effort queue's own limits go without here (judged with them): named in every run's history. */
  private queueLacks: string[] = [];
  /** Why the queue's limits cannot be enforced and its scripts must not run (not best-effort), else null. */
  refusal: string | null = null;

  constructor(private readonly o: LimitEnforcerOptions) {}

  /** Why cgroup v2 enforces no limit here, when the queue has no cgroups there. */
  private noV2Why = 'no writable cgroup v2 for the queue';

  /**
   * Finds the controllers: the v1 hierarchies' own cgroups, and those cgroup v2 gives
   * `limitsParent` (beside `plainParent`, the queue's cgroup; null where none was made, `why`).
   * Returns whether cgroup v2 has any for runs.
   */
  async open(plainParent: string | null, limitsParent: string | null, why: string | null): Promise<boolean> {
    if (this.o.env.RQ_CGROUP === 'off') return false;
    const scheduler = diskScheduler(this.o.queueDir);
    if (plainParent) this.v2 = V2Limits.open(path.dirname(plainParent), plainParent, limitsParent, scheduler, why ?? undefined);
    else if (why) this.noV2Why = `no cgroup v2 for the queue (${why})`;
    this.v1 = await LimitCgroups.open(this.o.cgroupName, ownV1Homes(), scheduler);
    return this.v2?.usable === true;
  }

  /** Whether cgroup v2 enforces any of `limits`: the run's cgroup then goes where the controllers are. */
  v2Takes(limits: RunLimits | undefined): boolean {
    return limits !== undefined && this.v2?.takes(limits) === true;
  }

  /**
   * Judges the queue's limits (at start, and again at each config reload): `refusal` is why its
   * scripts may not run, null when they may. Says it in the log.
   */
  judge(config: RunLimits, bestEffort: boolean): string | null {
    // Only the limit fields of what may be a whole queue config.
    const limits = effectiveLimits(config, {});
    this.queueLimits = limits;
    this.bestEffort = bestEffort;
    const problems = this.unenforceable(limits);
    this.queueLacks = bestEffort ? problems : [];
    this.refusal = null;
    if (problems.length === 0) {
      if (hasLimits(limits)) this.o.log.info({ limits, through: this.through(limits) }, 'run limits enforced');
      return null;
    }
    const why = `run limits cannot be enforced here: ${problems.join('; ')}`;
    if (bestEffort) this.o.log.warn({ why }, 'limits_best_effort: scripts run with the limits that can be enforced');
    else {
      this.refusal = `${why} (limits_best_effort: true runs scripts anyway)`;
      this.o.log.error({ why }, 'scripts are not run: their limits cannot be enforced');
    }
    return this.refusal;
  }

  /** Which cgroup version enforces each limit set. */
  private through(limits: RunLimits): Record<string, string> {
    const out: Record<string, string> = {};
    for (const f of RUN_LIMIT_FIELDS) if (limits[f] !== undefined) out[f] = this.v2?.why(f) === null ? 'cgroup v2' : 'cgroup v1';
    return out;
  }

  /** Why each of `limits` that is set cannot be enforced here, one text per limit; empty when all can. */
  private unenforceable(limits: RunLimits): string[] {
    const out: string[] = [];
    for (const f of RUN_LIMIT_FIELDS) {
      if (limits[f] === undefined) continue;
      if (!this.v1 && !this.v2) {
        out.push(`${f}: ${this.o.env.RQ_CGROUP === 'off' ? 'RQ_CGROUP=off' : 'the queue is stopping'}`);
        continue;
      }
      const v2 = this.v2 ? this.v2.why(f) : this.noV2Why;
      const v1 = this.v1 ? this.v1.why(f) : null;
      if (v2 !== null && v1 !== null) out.push(`${f}: ${v2}; ${v1}`);
    }
    return out;
  }

  /**
   * The run's limits, set up in its run cgroup v2 `dir` and its v1 cgroups. A limit the message asked
   * for beyond its queue's that cannot be enforced is left out and named; cgroups that cannot be
   * written refuse the start when the queue requires its limits, else the run goes without them.
   */
  prepare(msgId: string, limits: RunLimits | undefined, dir: string | null): RunLimitSetup {
    if (!limits || !hasLimits(limits)) return { v1: null, v2: null, unenforced: [] };
    const own = Object.fromEntries(Object.entries(limits).filter(([f]) => this.queueLimits[f as keyof RunLimits] === undefined));
    const asked = this.unenforceable(own);
    if (asked.length)
      this.o.log.warn(
        { msg_id: msgId, unenforced: asked },
        "limits the message asked for cannot be enforced here: the run goes without them (its queue's do not require them)",
      );
    const unenforced = [...this.queueLacks, ...asked];
    // The run cgroup its v2 limits are written into, and its usage read from, once the first is written.
    let v2: string | null = null;
    let v1: LimitRun | null = null;
    const failures: string[] = [];
    if (this.v2Takes(limits)) {
      if (dir === null) failures.push('the run has no cgroup v2 to write them into');
      else
        try {
          v2 = dir;
          this.v2!.apply(dir, limits);
        } catch (err) {
          failures.push(`cgroup v2: ${(err as Error).message}`);
        }
    }
    try {
      v1 = this.v1?.usable ? this.v1.make(msgId, limits) : null;
    } catch (err) {
      failures.push(`cgroup v1: ${(err as Error).message}`);
    }
    if (failures.length === 0) return { v1, v2, unenforced };
    const why = `run limits not all set up: ${failures.join('; ')}`;
    if (hasLimits(this.queueLimits) && !this.bestEffort) {
      void v1?.remove().catch(() => undefined);
      return { v1: null, v2: null, unenforced, refused: why };
    }
    this.o.log.warn({ msg_id: msgId, limits, err: why }, 'run limits not all set up: this run goes without those that were not');
    return { v1, v2, unenforced: [...unenforced, why] };
  }

  /** The child with what its cgroups say at its exit (usage, an OOM kill) and the limits it went without. */
  withLimits(child: LaunchedChild, lim: RunLimitSetup, limits: RunLimits | undefined): LaunchedChild {
    const { v1, v2, unenforced } = lim;
    if (!v1 && !v2 && unenforced.length === 0) return child;
    const exited = child.exited.then((info): ExitInfo => {
      const out: ExitInfo = { ...info, ...(unenforced.length ? { unenforced } : {}) };
      if (!v1 && !v2) return out;
      const a = v2 ? readV2Usage(v2, limits ?? {}) : { usage: {}, oom: null };
      const b = v1 ? v1.read() : { usage: {}, oom: null };
      const usage = { ...a.usage, ...b.usage };
      const oom = a.oom ?? b.oom;
      const whole = usage.cpu_user_ms !== undefined && usage.memory_peak_bytes !== undefined;
      // The cgroups' figures cover every process of the run; wait4's, the script and what it reaped: the fuller wins whole, the rest adds.
      if (whole) out.usage = { ...info.usage, ...(usage as RunUsage), source: 'cgroup' };
      else if (info.usage) out.usage = { ...usage, ...info.usage };
      if (oom) out.oom = oom;
      return out;
    });
    return { ...child, exited };
  }

  /** Removes the queue's v1 cgroups, ending what is left in them. */
  async close(): Promise<void> {
    await this.v1?.close();
  }
}
