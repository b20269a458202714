// A script's environment: what every run of a queue shares, flattened and checked once, with each run's own variables laid over it.
import { RQ_VERSION } from '../../version.js';
import { type Message, isSetFlag } from '../../message/message.js';
import { poolName } from '../../message/fleet-dest.js';
import { isRelayedDest, isRemoteUrl } from '../../message/relay-dests.js';

/**
 * Names rq sets (or clears, RQ_FORCE_REMOTE) for every run: the daemon's own values of them never reach a
 * script. Left out of the shared part, so that a start replaces none of them; a run's other names replace
 * what the shared part holds of them (`parts`).
 */
const PER_RUN = new Set([
  'RQ_VER',
  'RQ_SCRIPT',
  'RQ_REALSCRIPT',
  'RQ_HOST',
  'RQ_PORT',
  'RQ_DEST',
  'RQ_DEST_QUEUE',
  'RQ_MSG_ID',
  'RQ_FULL_MSG_ID',
  'RQ_MSG_DIR',
  'RQ_PIPE',
  'RQ_WRITE',
  'RQ_READ',
  'RQ_COUNT',
  'RQ_PARAM1',
  'RQ_PARAM2',
  'RQ_PARAM3',
  'RQ_PARAM4',
  'RQ_ORIG_MSG_ID',
  'PWD',
  'RQ_FORCE_REMOTE',
]);

const holdsNulText = (k: string, v: string) => k.includes('\0') || v.includes('\0');

/**
 * The variables every run of a queue shares: the daemon's own (less RUBYOPT, which would load the
 * daemon's gems into Ruby scripts) with the queue's env_vars over them. A hundred variables or more,
 * so they are turned into `K=V` strings and searched for NUL bytes once, not on every start.
 */
export class SharedEnv {
  private static readonly made = new WeakMap<NodeJS.ProcessEnv, WeakMap<Record<string, string>, SharedEnv>>();
  readonly vars: Record<string, string> = {};
  readonly entries: string[] = [];
  readonly holdsNul: boolean;
  /** Where each name is in `entries`, so a run's own value of it can replace it. */
  readonly at = new Map<string, number>();
  /** The queue's env_vars names: they win over rq's own variables of a run (PWD, TRACEPARENT), RQ_* aside. */
  readonly queueNames = new Set<string>();

  constructor(base: NodeJS.ProcessEnv, envVars: Record<string, string> = {}) {
    for (const k in base) if (k !== 'RUBYOPT' && !PER_RUN.has(k) && base[k] !== undefined) this.vars[k] = base[k];
    for (const k in envVars)
      if (!k.startsWith('RQ_')) {
        this.vars[k] = String(envVars[k]);
        this.queueNames.add(k);
      }
    let nul = false;
    for (const k in this.vars) {
      this.at.set(k, this.entries.length);
      this.entries.push(k + '=' + this.vars[k]);
      nul ||= holdsNulText(k, this.vars[k]);
    }
    this.holdsNul = nul;
  }

  /** One per daemon environment and env_vars object: a queue's config keeps its env_vars until it is read again. */
  static of(base: NodeJS.ProcessEnv, envVars: Record<string, string>): SharedEnv {
    let byVars = SharedEnv.made.get(base);
    if (!byVars) SharedEnv.made.set(base, (byVars = new WeakMap()));
    let shared = byVars.get(envVars);
    if (!shared) byVars.set(envVars, (shared = new SharedEnv(base, envVars)));
    return shared;
  }
}

/** One run's environment: the shared part and the run's own variables, which win over it but not over the queue's env_vars. */
export class ScriptEnv {
  constructor(
    readonly shared: SharedEnv,
    readonly own: Readonly<Record<string, string>> = {},
  ) {}

  /** A plain set of variables, as tests or an environment made by hand give it: all of it shared. */
  static of(vars: NodeJS.ProcessEnv): ScriptEnv {
    return new ScriptEnv(new SharedEnv(vars));
  }

  get(name: string): string | undefined {
    return this.own[name] !== undefined && !this.shared.queueNames.has(name) ? this.own[name] : this.shared.vars[name];
  }

  /**
   * The `K=V` strings for execve, in two parts: the shared part as made once (its `entries` first),
   * and the run's own strings that follow it; or, when a run's own variable replaces one of the
   * shared ones, null and all of them. The native spawner joins them (rq-spawn-strings.c).
   */
  parts(): { shared: SharedEnv | null; own: string[] } {
    const own: string[] = [];
    let replaced: Set<number> | null = null;
    for (const k in this.own) {
      if (this.shared.queueNames.has(k)) continue;
      const i = this.shared.at.get(k);
      if (i !== undefined) (replaced ??= new Set()).add(i);
      own.push(k + '=' + this.own[k]);
    }
    if (!replaced) return { shared: this.shared, own };
    return { shared: null, own: this.shared.entries.filter((_, i) => !replaced.has(i)).concat(own) };
  }

  /** The same variables as an object, for child_process. */
  object(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...this.shared.vars };
    for (const k in this.own) if (!this.shared.queueNames.has(k)) env[k] = this.own[k];
    return env;
  }

  holdsNul(): boolean {
    if (this.shared.holdsNul) return true;
    for (const k in this.own) if (holdsNulText(k, this.own[k])) return true;
    return false;
  }
}

export interface EnvContext {
  msg: Message;
  fullId: string;
  queue: string;
  script: string;
  realScript: string;
  jobDir: string;
  /** RQ_HOST: http://host:port/root/ */
  hostUrl: string;
  port: string | number;
  envVars: Record<string, string>;
  /** The daemon's environment as scripts inherit it (run-policy.ts inheritedEnv): one object for the life of the queue. */
  baseEnv: NodeJS.ProcessEnv;
  /** What the run's policy adds (RQ_ATTEMPT, RQ_TIMEOUT, TRACEPARENT…; run-policy.ts). */
  runEnv?: Readonly<Record<string, string>>;
}

/** The queue a dest names: a bare name, the segment after /q/ of a URL or /q/<name> path, or a pool's queue. */
export function destQueue(dest: string): string {
  const m = /(?:^|\/)q\/([^/]+)/.exec(dest);
  return m && (isRemoteUrl(dest) || dest.startsWith('/')) ? m[1] : (poolName(dest) ?? dest);
}

/** Spec §4.4, with the fixes of §16.15: RQ_DEST honours relative_root and /q/<name> paths. */
export function scriptEnv(c: EnvContext): ScriptEnv {
  const m = c.msg;
  const dest = String(m.dest);
  const str = (v: unknown) => (v === undefined || v === null ? '' : String(v));
  // A literal of fixed shape, the policy's few added after: a spread first would cost more than all the rest.
  const own: Record<string, string> = {
    RQ_VER: RQ_VERSION,
    RQ_SCRIPT: c.script,
    RQ_REALSCRIPT: c.realScript,
    RQ_HOST: c.hostUrl,
    RQ_PORT: String(c.port),
    RQ_DEST: isRelayedDest(dest) ? dest : `${c.hostUrl}q/${destQueue(dest)}/`,
    RQ_DEST_QUEUE: destQueue(dest),
    RQ_MSG_ID: m.msg_id,
    RQ_FULL_MSG_ID: c.fullId,
    RQ_MSG_DIR: c.jobDir,
    RQ_PIPE: '3',
    RQ_WRITE: '3',
    RQ_READ: '4',
    RQ_COUNT: String(m.count ?? 0),
    RQ_PARAM1: str(m.param1),
    RQ_PARAM2: str(m.param2),
    RQ_PARAM3: str(m.param3),
    RQ_PARAM4: str(m.param4),
    RQ_ORIG_MSG_ID: str(m.orig_msg_id),
    // The daemon's own PWD would be stale: scripts run in job/ (a shell would reset it; python would not).
    PWD: c.jobDir,
  };
  if (isSetFlag(m.force_remote)) own.RQ_FORCE_REMOTE = '1';
  for (const k in c.runEnv) if (!(k in own)) own[k] = c.runEnv[k];
  return new ScriptEnv(SharedEnv.of(c.baseEnv, c.envVars), own);
}
