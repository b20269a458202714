// What in a root is not running as it should, each with the reason and the fix: `rq doctor` prints it, GET /doctor.json serves it.
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths, rootPaths } from '../config/paths.js';
import { loadGlobalConfig } from '../config/global-config.js';
import { checkFleetScopes, loadLimits } from '../config/limits-config.js';
import type { Answer } from '../ipc/answer.js';
import type { RefusedEntry, WorkerInfo } from '../ipc/mgr-client.js';
import type { StatusDetail } from '../ipc/queue-client.js';
import type { TimersClient } from '../ipc/timers-client.js';
import { type FleetDoctorDeps, fleetFindings } from './doctor-fleet.js';
import { isScandirQueue } from './queue-dirs.js';

/** `problem`: something to fix; `info`: a state an operator chose (PAUSE, DOWN), listed but all is still well. */
export type Severity = 'problem' | 'info';

export interface Finding {
  severity: Severity;
  /** What it is about: `rq-mgr`, `scandir/<q>`, `queues/<q>`, `queue <q>`, `web`, `timers`, `fleet`, `config/config.json`, `disk`. */
  subject: string;
  reason: string;
  fix: string;
}

export interface DoctorReport {
  /** No finding of severity `problem`. */
  ok: boolean;
  /** rq-mgr answered; when it did not, that is the one finding and nothing else was checked. */
  mgr: boolean;
  /** Queues whose process runs and reports UP. */
  running: number;
  findings: Finding[];
}

/** What the checks ask: rq-mgr's socket and each queue's (the web passes its pooled clients, the CLI one-shot ones). */
export interface DoctorDeps {
  root: string;
  mgr: FleetDoctorDeps & {
    ping: (timeoutMs?: number) => Promise<boolean>;
    status: (timeoutMs?: number) => Promise<Answer<Record<string, WorkerInfo>>>;
    refusedQueues: (timeoutMs?: number) => Promise<Answer<RefusedEntry[]>>;
  };
  statusDetail: (queue: string) => Promise<Answer<StatusDetail>>;
  /** rq-timers: the timer files it refused or ignored, and the timers whose last delivery failed. */
  timers: Pick<TimersClient, 'refused' | 'undelivered'>;
}

/** rq-mgr answers at once or is not there; a queue that needs longer is itself a finding. */
const MGR_TIMEOUT_MS = 3000;
/** How long rq-timers may run before it answers its socket (it reads timers/ first). */
const TIMERS_SETTLE_S = 10;
/** Below this much free space on the root's filesystem, creates and runs are about to fail. */
const LOW_SPACE_BYTES = 16 * 1024 * 1024;

const problem = (subject: string, reason: string, fix: string): Finding => ({ severity: 'problem', subject, reason, fix });

/**
 * The config.json that sets a queue's limits: for a queue scandir made, its link's directory's
 * (scandir rewrites queues/<q>/config.json from it, and has the queue read it again when it changes); else
 * the queue's own, which its process reads again on SIGHUP.
 */
async function limitsConfig(root: string, name: string): Promise<LimitsConfig> {
  if (await isScandirQueue(root, name)) {
    const target = await fs.realpath(path.join(rootPaths(root).scandir, name)).catch(() => null);
    if (target) return { file: path.join(target, 'config.json'), reload: null };
  }
  const q = queuePaths(root, name);
  return { file: q.configFile, reload: `kill -HUP $(cat ${q.pidFile})` };
}

/** The file that sets a queue's limits, and the command that has the queue read it again (null: scandir has it read again when the file changes). */
type LimitsConfig = { file: string; reload: string | null };

/**
 * What to do about limits the host cannot enforce, naming the file to change and, from `reason`, what would let them
 * hold: rq-mgr started with RQ_CGROUP=off, or a disk no bfq schedules (io_weight), where cgroup hierarchies are not the cause.
 */
function limitsFix(c: LimitsConfig, reason: string): string {
  const enable = reason.includes('RQ_CGROUP=off')
    ? 'start rq-mgr without RQ_CGROUP=off in its environment (it turns run cgroups off)'
    : /\bbfq\b/i.test(reason)
      ? "have the queue's disk scheduled by bfq (echo bfq > /sys/block/<disk>/queue/scheduler)"
      : 'give rq the cgroup hierarchies (docs/operations.md, Run limits)';
  const change = `remove the limits named from ${c.file}, or add "limits_best_effort": true to it, or ${enable}`;
  return c.reload ? `${change}, then reload the queue: ${c.reload}` : `${change}; the queue reads it again when that file changes`;
}

/** A queue whose worker runs: what its process reports, as a finding when it is not UP. */
function queueFinding(name: string, d: StatusDetail, root: string, config: LimitsConfig | null): Finding | null {
  const subject = `queue ${name}`;
  const p = rootPaths(root);
  switch (d.status) {
    case 'UP':
      return null;
    case 'PAUSE':
      return {
        severity: 'info',
        subject,
        reason: `paused by an operator (${p.config}/${name}.pause): running messages finish, no new one starts`,
        fix: `rq resume ${name}`,
      };
    case 'DOWN':
      return {
        severity: 'info',
        subject,
        reason: `down by an operator (${p.config}/${name}.down): nothing runs`,
        fix: `rm ${p.config}/${name}.down (or Up on its queue page)`,
      };
    case 'SCRIPTERROR':
      return problem(
        subject,
        `SCRIPTERROR: ${d.reason ?? 'its script cannot run'}; its messages wait in que`,
        config
          ? limitsFix(config, d.reason ?? '')
          : 'make the script exist and executable at that path (chmod +x, or restore the file or link); the queue notices and starts its messages',
      );
    case 'DISK FULL':
      return problem(
        subject,
        `DISK FULL: ${d.reason ?? 'no space left'}; creates are refused and no script starts`,
        `free space on the filesystem of ${p.queues}; the queue resumes by itself`,
      );
    default:
      return problem(subject, `status ${d.status}`, "see rq-mgr's log for this queue");
  }
}

async function queueFindings(deps: DoctorDeps, workers: Record<string, WorkerInfo>): Promise<{ findings: Finding[]; running: number; held: Set<string> }> {
  const findings: Finding[] = [];
  const held = new Set<string>();
  let running = 0;
  const names = Object.entries(workers).filter(([name]) => !name.startsWith('['));
  const answers = await Promise.all(
    names.map(async ([name, w]) => {
      if (w.status !== 'RUNNING') return { name, w, d: null, err: null };
      return deps.statusDetail(name).then(
        (d) => ({ name, w, d, err: null }),
        (err: unknown) => ({ name, w, d: null, err: err as Error }),
      );
    }),
  );
  for (const { name, w, d, err } of answers.sort((a, b) => a.name.localeCompare(b.name))) {
    const subject = `queue ${name}`;
    if (w.status !== 'RUNNING') {
      findings.push(
        problem(
          subject,
          `its process is ${w.status}${w.last_exit ? ` (last exit: ${w.last_exit})` : ''}`,
          w.status === 'ERROR'
            ? "fix what rq-mgr's log says it dies of, then restart it (Restart on its queue page)"
            : "rq-mgr restarts it; if it keeps dying, rq-mgr's log says why",
        ),
      );
      continue;
    }
    if (err || !d) {
      findings.push(
        problem(subject, `its process does not answer (${err?.message ?? 'no reply'})`, "see rq-mgr's log for this queue; rq-mgr restarts a process that dies"),
      );
      continue;
    }
    if (!d.ok) {
      findings.push(problem(subject, `status refused: ${d.text}`, "see rq-mgr's log for this queue"));
      continue;
    }
    const limitsHeld = d.value.status === 'SCRIPTERROR' && d.value.reason?.startsWith('run limits cannot be enforced') === true;
    const config = limitsHeld ? await limitsConfig(deps.root, name) : null;
    const f = queueFinding(name, d.value, deps.root, config);
    if (f) findings.push(f);
    if (d.value.status === 'UP') running += 1;
    if (d.value.status === 'SCRIPTERROR') held.add(name);
  }
  return { findings, running, held };
}

/**
 * rq-mgr's web and timers processes (`[web]`, `[timers]` in its worker list): one that named why it
 * cannot serve (a port in use) is that problem and its fix; one that does not run otherwise is a finding.
 */
function componentFindings(workers: Record<string, WorkerInfo>): Finding[] {
  return Object.entries(workers)
    .filter(([name, w]) => name.startsWith('[') && (w.status !== 'RUNNING' || w.problem))
    .map(([name, w]) => {
      const what = name.slice(1, -1);
      if (w.problem) return problem(what, w.problem.reason, w.problem.fix);
      return problem(
        what,
        `rq-mgr's ${what} process is ${w.status}${w.last_exit ? ` (last exit: ${w.last_exit})` : ''}`,
        w.status === 'ERROR'
          ? "it died too often to be restarted: fix what rq-mgr's log says it dies of, then bin/rq-mgr restart"
          : "rq-mgr restarts it; if it keeps dying, rq-mgr's log says why",
      );
    });
}

/**
 * Each entry of timers/ that defines no timer, and each timer whose last message was not delivered,
 * asked while rq-timers runs (one that does not is componentFindings'). One that does not answer is
 * a problem once it has run TIMERS_SETTLE_S: before, it may not listen yet.
 */
async function timerFindings(deps: DoctorDeps, workers: Record<string, WorkerInfo>): Promise<Finding[]> {
  const w = workers['[timers]'];
  if (w?.status !== 'RUNNING') return [];
  const failed = (err: Error) => ({ ok: false as const, text: err.message });
  const [refused, undelivered] = await Promise.all([deps.timers.refused().catch(failed), deps.timers.undelivered().catch(failed)]);
  if (!refused.ok || !undelivered.ok) {
    if ((w.uptime ?? 0) < TIMERS_SETTLE_S) return [];
    const why = [refused, undelivered].flatMap((r) => (r.ok ? [] : [r.text])).join('; ');
    return [problem('timers', `rq-timers did not list its timer files' problems: ${why}`, "rq-mgr's log says why; bin/rq-mgr restart starts it anew")];
  }
  return [
    ...refused.value.map((t) => problem(`timers/${t.file}`, `${t.reason}; no timer is defined by it`, t.fix)),
    ...undelivered.value.map((t) =>
      problem(
        `timers/${t.file}`,
        `its message for ${new Date(t.occurrence * 1000).toISOString()} was not delivered: ${t.error}`,
        `make its dest a queue that takes the message (create that queue, or correct dest in timers/${t.file}): rq-timers tries again until the next occurrence supersedes it`,
      ),
    ),
  ];
}

/** config/config.json readable, and not readable by others when it holds passwords. */
async function configFindings(root: string): Promise<Finding[]> {
  const file = rootPaths(root).configFile;
  let config;
  try {
    config = await loadGlobalConfig(file);
  } catch (err) {
    return [problem('config/config.json', (err as Error).message, `correct ${file}`)];
  }
  const { mode } = await fs.stat(file);
  const found: Finding[] = [];
  if (config.basic_auth && (mode & 0o077) !== 0) {
    found.push(problem('config/config.json', `holds basic_auth passwords and is readable by others (mode ${(mode & 0o777).toString(8)})`, `chmod 600 ${file}`));
  }
  // rq-mgr keeps the limits it had; a key only the bad file names is refused at every create.
  const limits = rootPaths(root).limitsFile;
  await loadLimits(limits)
    .then((table) => checkFleetScopes(table, config.fleet !== undefined))
    .catch((err: Error) => found.push(problem('config/limits.json', err.message, `correct ${limits}: rq-mgr reads it again at once`)));
  return found;
}

/** The filesystem of the root, nearly full: queues are about to go DISK FULL. */
async function diskFindings(root: string): Promise<Finding[]> {
  const st = await fs.statfs(rootPaths(root).queues).catch(() => null);
  if (!st) return [];
  const free = st.bavail * st.bsize;
  if (free >= LOW_SPACE_BYTES) return [];
  return [
    problem(
      'disk',
      `the filesystem of ${rootPaths(root).queues} has ${Math.floor(free / 1024)} KiB free, under the ${LOW_SPACE_BYTES / 1024 / 1024} MiB rq warns at`,
      'free space on it: once it is full, queues refuse creates and start no script until there is room again',
    ),
  ];
}

/**
 * Every check, in order: rq-mgr first (down, it is the one finding: nothing else can be asked),
 * then the entries it refused, each queue it supervises, its web and timers (and the timer files refused), this host in its fleet,
 * the config file and the disk.
 */
export async function doctorReport(deps: DoctorDeps): Promise<DoctorReport> {
  const sock = rootPaths(deps.root).mgrSock;
  const down = (why: string): DoctorReport => ({
    ok: false,
    mgr: false,
    running: 0,
    findings: [problem('rq-mgr', `rq-mgr does not answer on ${sock} (${why}); nothing else can be checked`, `start it: bin/rq-mgr start --root ${deps.root}`)],
  });
  try {
    if (!(await deps.mgr.ping(MGR_TIMEOUT_MS))) return down('no pong');
  } catch (err) {
    return down((err as Error).message);
  }
  const [workers, refused] = await Promise.all([deps.mgr.status(MGR_TIMEOUT_MS), deps.mgr.refusedQueues(MGR_TIMEOUT_MS)]);
  const entries = refused.ok ? refused.value : [];
  const q = await queueFindings(deps, workers.ok ? workers.value : {});
  // A queue in SCRIPTERROR says why itself; its scandir link, refused for the same cause, would say it twice.
  const entryFindings = entries.filter((e) => !q.held.has(e.entry)).map((e) => problem(e.dir ? `queues/${e.entry}` : `scandir/${e.entry}`, e.reason, e.fix));
  const findings = [
    ...entryFindings,
    ...q.findings,
    ...componentFindings(workers.ok ? workers.value : {}),
    ...(await timerFindings(deps, workers.ok ? workers.value : {})),
    ...(await fleetFindings(deps.mgr, rootPaths(deps.root).configFile, workers.ok ? workers.value['[web]'] : undefined)),
    ...(await configFindings(deps.root)),
    ...(await diskFindings(deps.root)),
  ];
  if (!refused.ok) findings.push(problem('rq-mgr', `refused_queues answered: ${refused.text}`, 'run an rq-mgr of the same version as this rq'));
  return { ok: !findings.some((f) => f.severity === 'problem'), mgr: true, running: q.running, findings };
}
