// Each script in a cgroup v2 of its own, so what it leaves running is ended with its run even after setsid(2): the queue's parent cgroup, its run cgroups, and the launcher that uses them.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { killAll, members, ownCgroupHome, populated, removeCgroup } from './cgroup-fs.js';
import { queuesHome } from './cgroup-leaf.js';
import { V2_CONTROLLERS, availableBelow } from './cgroup-delegation.js';
import { REMOVE_MS, endCgroupLeftovers, endLeftovers, signalMembers } from './leftovers.js';
import { type ExitInfo, type LaunchRequest, type Launcher, failedLaunch } from './script-runner.js';
import type { RunLimits } from '../../message/run-limits.js';
import { probe } from './cgroup-probe.js';
import { RunCgroupStock } from './run-cgroup-stock.js';
import { LimitEnforcer } from './limit-enforcer.js';
import { sha256Hex } from './sha256-hex.js';

export interface RunCgroupsOptions {
  name: string;
  /** The queue's directory: a hash of it keeps apart same-named queues of two roots on one host. */
  queueDir: string;
  log: Logger;
  /** `RQ_CGROUP=off` keeps scripts in the queue's cgroup (their process groups only), unlimited. */
  env: NodeJS.ProcessEnv;
  /** The queue's run limits (its config), and whether its scripts may run where some cannot be enforced. */
  limits?: RunLimits;
  bestEffort?: boolean;
}

/** A name for a cgroup directory: no `/`, nothing a kernel or a shell would mind. */
function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The name of queue `name`'s parent cgroup: `rq-<queue>-<hash of its directory's real path>`. */
export function parentCgroupName(name: string, queueDir: string): string {
  const hash = sha256Hex(fs.realpathSync(queueDir)).slice(0, 8);
  return `rq-${safeName(name)}-${hash}`;
}

/**
 * The queue's parent cgroup, `rq-<queue>-<hash>` beside the queue process in its own cgroup (or
 * beside rq-mgr's leaf, `cgroup-leaf.ts`), holds one cgroup per run: who belongs to a run, and
 * where the controllers the host delegates limit and account it (LimitEnforcer).
 * Where there is no writable cgroup2 (not root, a read-only mount, cgroup v1 only, Linux before
 * 5.14, a launcher that cannot start a script in one), scripts run as before, in their process
 * groups, and start() logs why.
 */
export class RunCgroups {
  private parent: string | null = null;
  /** start()'s work, which a stop arriving meanwhile waits for: else the parent would be made after the close. */
  private opening: Promise<string | null> | null = null;
  /** A stop can come while the queue is still starting: a start after it makes nothing. */
  private closed = false;
  /** The run cgroups kept ready in the parent; it makes those of runs with limits too. */
  private stock: RunCgroupStock | null = null;
  /** Run cgroups being ended (their leftovers' grace, their removal): a close waits for them. */
  private readonly ending = new Set<Promise<void>>();
  /** Where the queue's run limits are enforced, and whether they can be. */
  private readonly limits: LimitEnforcer;
  /** Beside the parent: the cgroup whose runs have the cgroup v2 controllers, for runs with limits only (a memory cgroup per run would weigh on every run). */
  private limitsParent: string | null = null;

  constructor(private readonly o: RunCgroupsOptions) {
    this.limits = new LimitEnforcer({ cgroupName: parentCgroupName(o.name, o.queueDir), queueDir: o.queueDir, log: o.log, env: o.env });
  }

  /** Why the queue's limits cannot be enforced and its scripts must not run (not best-effort), else null. */
  get limitsRefusal(): string | null {
    return this.limits.refusal;
  }

  /**
   * Makes (or takes over) the parent cgroup, kills and removes what a previous process of this
   * queue left in it (a crash), and has `launch` start a probe in a cgroup. Call it once this
   * process is the queue's only one (its socket is claimed), before anything runs. One info line
   * says which way scripts are kept.
   */
  async start(launch: Launcher): Promise<void> {
    this.opening = (async () => {
      const why = await this.open(launch).catch((err: Error) => err.message);
      const o = this.o;
      if (why === null) o.log.info({ cgroup: this.parent }, 'each script runs in a cgroup of its own: what it leaves running is ended with its run');
      else o.log.info({ why }, 'scripts run in their process groups only: a process that leaves the group (setsid) outlives its run');
      await this.openLimits(why);
      return why;
    })();
    await this.opening;
  }

  /**
   * The controllers runs with limits use, and whether the queue's own limits can be enforced with
   * them; said once, at start. `why` is why the queue has no parent cgroup v2, if it has none.
   */
  private async openLimits(why: string | null): Promise<void> {
    if (this.closed) return;
    const limitsParent =
      this.parent && this.o.env.RQ_CGROUP !== 'off' && availableBelow(path.dirname(this.parent), V2_CONTROLLERS).usable.length ? `${this.parent}-limits` : null;
    let made: string | null = null;
    try {
      // Made only where cgroup v2 has a controller rq may use: elsewhere it would only come and go.
      if (limitsParent) {
        fs.mkdirSync(limitsParent, { recursive: true });
        made = limitsParent;
        await this.clearLeftovers(limitsParent);
      }
    } catch (err) {
      why = `cannot ${made ? 'clear what a previous queue process left in' : 'make'} ${limitsParent}: ${(err as Error).message}`;
    }
    const v2 = await this.limits.open(this.parent, made, why);
    if (v2) this.limitsParent = made;
    else if (made)
      await removeCgroup(made, REMOVE_MS).catch((err: Error) =>
        this.o.log.warn({ cgroup: made, err: err.message }, "cgroup not removed; the queue's next start takes it over"),
      );
    this.judge(this.o.limits ?? {}, this.o.bestEffort === true);
  }

  /** Judges the queue's limits (at start, and again at each config reload): why its scripts may not run, null when they may. */
  judge(config: RunLimits, bestEffort: boolean): string | null {
    return this.limits.judge(config, bestEffort);
  }

  /** null once the parent cgroup is in use, else why it is not. */
  private async open(launch: Launcher): Promise<string | null> {
    if (this.closed) return 'the queue is stopping';
    if (this.o.env.RQ_CGROUP === 'off') return 'RQ_CGROUP=off';
    const home = ownCgroupHome();
    if (!home.ok) return home.why;
    const parent = path.join(queuesHome(home.dir), parentCgroupName(this.o.name, this.o.queueDir));
    try {
      fs.mkdirSync(parent);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code !== 'EEXIST') return `cannot make a cgroup in ${path.dirname(parent)}: ${e.code ?? e.message}`;
    }
    // Without cgroup.kill (Linux 5.14), ending a run would mean chasing forks: not worth it.
    if (!fs.existsSync(path.join(parent, 'cgroup.kill'))) {
      fs.rmdirSync(parent);
      return 'cgroup.kill is missing (Linux 5.14 or later)';
    }
    await this.clearLeftovers(parent);
    const failed = await probe(parent, launch);
    if (failed) {
      await removeCgroup(parent, REMOVE_MS);
      return failed;
    }
    this.parent = parent;
    this.stock = new RunCgroupStock(parent);
    await this.stock.restock();
    return null;
  }

  /** Kills what runs of a previous queue process left in their cgroups, and removes those. */
  private async clearLeftovers(parent: string): Promise<void> {
    const runs = fs.readdirSync(parent, { withFileTypes: true }).filter((e) => e.isDirectory());
    if (runs.length === 0) return;
    const left = runs.filter((e) => populated(path.join(parent, e.name)));
    const pids = left.flatMap((e) => members(path.join(parent, e.name)));
    killAll(parent);
    if (left.length) this.o.log.warn({ cgroups: left.map((e) => e.name), pids }, 'killed what scripts of a previous queue process left in their run cgroups');
    for (const e of runs) await removeCgroup(path.join(parent, e.name), REMOVE_MS);
  }

  /** Wraps `launch` so each run starts in its own cgroup (and its limits' cgroups) and is signalled and ended through it. */
  around(launch: Launcher): Launcher {
    return (r) => {
      const id = r.msgId ?? 'run';
      // A run whose limits cgroup v2 enforces goes where the controllers are; any other where none are.
      const parent = this.limitsParent && this.limits.v2Takes(r.limits) ? this.limitsParent : this.parent;
      const dir = parent && this.make(id, parent);
      const lim = this.limits.prepare(safeName(id), r.limits, dir);
      // Limits the queue requires and that could not be set up: the start is refused (the message waits in the que, retried), never run without them.
      if (lim.refused) {
        if (dir) this.end(removeCgroup(dir, REMOVE_MS), dir, id);
        return failedLaunch(lim.refused, 'EAGAIN');
      }
      // Assigned, not spread: a literal that starts with a spread costs several times as much on every start.
      const req: LaunchRequest = Object.assign({}, r);
      if (lim.v1) req.joins = lim.v1.joins;
      if (dir) req.cgroup = dir;
      const child = this.limits.withLimits(launch(req), lim, r.limits);
      // The next start's cgroup is made while this one runs, if none is ready.
      void this.stock?.restock();
      const limitsGone = () => lim.v1?.remove();
      if (child.pid <= 0) {
        this.end(
          Promise.all([dir && removeCgroup(dir, REMOVE_MS), limitsGone()]).then(() => undefined),
          dir ?? 'run limit cgroups',
          id,
        );
        return child;
      }
      if (!dir) {
        if (!lim.v1) return child;
        return {
          ...child,
          // Without a run cgroup the group's grace ends what is left; then the limit cgroups end the rest (a setsid daemon) and go.
          endLeftovers: (log, graceMs) => {
            endLeftovers(child.pid, log, graceMs);
            setTimeout(() => this.end(limitsGone() ?? Promise.resolve(), 'run limit cgroups'), graceMs).unref();
          },
        };
      }
      // Kept for another run only where no controller counts, and from a run that ended by itself: one the queue signalled (its timeout, a kill)
      // is removed, and so is one whose script a signal ended. A cgroup.kill written by anyone ends the script with SIGKILL, and on some kernels
      // a process later started into a cgroup once killed that way is killed at its birth.
      let signalled = false;
      let kept = false;
      const keep = (exit: ExitInfo) => () =>
        (kept = !signalled && exit.signal === null && parent === this.parent && this.stock !== null && this.stock.keep(dir));
      return {
        ...child,
        // Empty until the gate launcher's move is done: its process group is all there is then. Once kept, the cgroup may be another run's.
        kill: (signal) => {
          signalled = true;
          if (kept || members(dir).length === 0) child.kill(signal);
          else if (signal === 'SIGKILL') killAll(dir);
          else signalMembers(dir, signal);
        },
        endLeftovers: (log, graceMs, exit) => this.end(endCgroupLeftovers(dir, child.pid, log, graceMs, keep(exit)).finally(limitsGone), dir, id),
      };
    };
  }

  /**
   * A run cgroup in `parent` (a ready one when there is one), or null (logged) when none can be made:
   * that run is kept by its process group only. Named `run-<n>`, not after the message, since one is
   * made before its message is known and may serve several; the log lines that name a run cgroup name the message.
   */
  private make(msgId: string, parent: string): string | null {
    const ready = parent === this.parent ? this.stock?.take() : null;
    if (ready) return ready;
    try {
      return this.stock!.make(parent);
    } catch (err) {
      this.o.log.warn({ msg_id: msgId, cgroup: parent, err: (err as Error).message }, 'run cgroup not made: this run is kept by its process group only');
      return null;
    }
  }

  private end(ending: Promise<void>, dir: string, msgId?: string): void {
    const p = ending.catch((err: Error) =>
      this.o.log.warn({ msg_id: msgId, cgroup: dir, err: err.message }, "run cgroup not removed; the queue's next start removes it"),
    );
    this.ending.add(p);
    void p.finally(() => this.ending.delete(p));
  }

  /**
   * At shutdown, once every run is over: what runs left in their cgroups is killed without waiting
   * out the rest of its grace (as the leftovers of scripts stopped by the shutdown are), and the
   * cgroups and the parent are removed.
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.opening;
    await this.stock?.close();
    const parents = [this.parent, this.limitsParent].filter((p): p is string => p !== null);
    // What the stock held goes with the parent (removeCgroup removes the cgroups left in it).
    this.parent = this.limitsParent = this.stock = null;
    for (const parent of parents) killAll(parent);
    await Promise.all([...this.ending]);
    await this.limits.close();
    for (const parent of parents)
      await removeCgroup(parent, REMOVE_MS).catch((err: Error) =>
        this.o.log.warn({ cgroup: parent, err: err.message }, "queue cgroup not removed; the queue's next start takes it over"),
      );
  }
}
