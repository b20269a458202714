// `rq-mgr start|stop|status|restart|run|zap|reindex <q>`: the supervisor's control program.
import { RqError } from '../errors.js';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEtcdCredentials } from '../config/fleet-credentials.js';
import { loadGlobalConfig } from '../config/global-config.js';
import { rootPaths } from '../config/paths.js';
import { resolveRoot } from '../config/root.js';
import { MgrClient, type WorkerInfo } from '../ipc/mgr-client.js';
import { livePid } from '../mgr/pid-file.js';
import { queueNameProblem } from '../message/names.js';
import { closest } from '../message/nearest-name.js';
import { parseArgs } from '../args.js';
import { ask, replyLine } from './queue-ask.js';
import { INIT_HELP, MGR_HELP, mgrLineProblem } from './mgr-help.js';

const USAGE = 'usage: rq-mgr start|stop [--timeout S]|status|restart [--timeout S]|run [--watch-stdin]|zap|reindex <queue> [--root DIR]';
/** How long `stop` waits for a TERMed rq-mgr before KILL, unless --timeout says otherwise. */
const STOP_WAIT_S = 20;
const COMMANDS = ['start', 'stop', 'status', 'restart', 'run', 'zap', 'reindex'];

/** A rebuild reads every `msg` of the queue, done/ and relayed/ included. */
const REINDEX_WAIT_MS = 600_000;

async function waitUntil(probe: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  // Another process's exit or socket has no event we can subscribe to from here: poll gently.
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return probe();
}

async function answers(sock: string): Promise<boolean> {
  try {
    return await new MgrClient(sock).ping(1000);
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function start(root: string): Promise<number> {
  const p = rootPaths(root);
  const running = await livePid(p.mgrPid);
  if (running) {
    console.error(`queuemgr: already running with pid ${running}`);
    return 1;
  }
  // Logs name messages and their params: not world-readable, as the daemons' own files.
  await fsp.mkdir(p.log, { recursive: true, mode: 0o750 });
  const logFd = fs.openSync(path.join(p.log, 'queuemgr.log'), 'a', 0o640);
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, 'run', '--root', root], { detached: true, stdio: ['ignore', logFd, logFd], cwd: root });
  fs.closeSync(logFd);
  child.unref();
  // One that exits at start (a root it cannot use) is told at once, not after the whole wait.
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = signal ?? `exit ${code}`));
  const ok = await waitUntil(async () => exited !== undefined || (await answers(p.mgrSock)), 10_000);
  if (!ok || exited !== undefined) {
    console.error(`queuemgr: did not come up${exited ? ` (${exited})` : ''}; see ${path.join(p.log, 'queuemgr.log')}`);
    return 1;
  }
  console.log(`queuemgr: process with pid ${child.pid} started.`);
  return 0;
}

/** Whether `root` has no config/config.json, said on stderr: then no rq-mgr of it can be running, or start. */
function noRoot(root: string): boolean {
  if (fs.existsSync(rootPaths(root).configFile)) return false;
  console.error(`rq-mgr: ${root} is no rq root yet (no config/config.json): bin/rq-install --root ${root} makes it one`);
  return true;
}

/** 1 when config/config.json (or a file its fleet block names) is one rq-mgr would refuse at start, said on stderr with `more`; undefined when it would start. */
async function configRefused(root: string, more = ''): Promise<number | undefined> {
  if (noRoot(root)) return 1;
  try {
    const config = await loadGlobalConfig(rootPaths(root).configFile, 'config/config.json');
    // The files the fleet block names are read at rq-mgr's start too: one it cannot read is refused here, in words.
    if (config.fleet) await readEtcdCredentials(config.fleet, 'config/config.json');
    return undefined;
  } catch (err) {
    console.error(`rq-mgr: ${(err as Error).message}${more}`);
    return 1;
  }
}

/** --timeout: whole seconds 1-3600; the default otherwise. */
function stopWait(v: unknown): number | string {
  if (v === undefined) return STOP_WAIT_S;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return n >= 1 && n <= 3600 ? n : `rq-mgr: --timeout: expected whole seconds 1-3600, received ${JSON.stringify(v)}`;
}

async function stop(root: string, waitS: number): Promise<number> {
  const p = rootPaths(root);
  const pid = await livePid(p.mgrPid);
  if (!pid) {
    await fsp.rm(p.mgrPid, { force: true });
    console.log('queuemgr: not running');
    return 0;
  }
  process.kill(pid, 'SIGTERM');
  if (!(await waitUntil(() => !alive(pid), waitS * 1000))) {
    console.error(`queuemgr: pid ${pid} did not stop within ${waitS} s; sending SIGKILL (its queues stop when they see it gone)`);
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => !alive(pid), 5000);
    await fsp.rm(p.mgrPid, { force: true });
    await fsp.rm(p.mgrSock, { force: true });
  }
  console.log(`queuemgr: stopped (pid ${pid})`);
  return 0;
}

/** `  SCRIPTERROR: <why>` (or DISK FULL) for a queue whose process runs but can run no script; '' otherwise, or when it does not say. */
async function heldBy(root: string, queue: string): Promise<string> {
  const d = await ask(root, queue, (c) => c.statusDetail(), 2000).catch(() => null);
  return d?.ok && d.value.reason ? `  ${d.value.status}: ${d.value.reason}` : '';
}

async function status(root: string): Promise<number> {
  // 4, the LSB status "unknown": a mistyped --root is not a supervisor that is down (3).
  if (noRoot(root)) return 4;
  const p = rootPaths(root);
  const pid = await livePid(p.mgrPid);
  if (!pid) {
    console.log('queuemgr: not running');
    return 3;
  }
  console.log(`queuemgr: running [pid ${pid}]`);
  try {
    const r = await new MgrClient(p.mgrSock).status(5000);
    if (!r.ok) throw RqError.of('RQ_ERR_PROTOCOL', r.text);
    // Queues by name, as rq queues lists them, then the other workers ([web], [timers]…): not in the order they started.
    const rows = Object.entries(r.value).sort(([a], [b]) => Number(a.startsWith('[')) - Number(b.startsWith('[')) || (a < b ? -1 : a > b ? 1 : 0));
    const held = await Promise.all(rows.map(([name, w]) => (w.status === 'RUNNING' && !name.startsWith('[') ? heldBy(root, name) : '')));
    // A worker with no process (restarting, given up) says what it last died of, not an empty pid and uptime.
    const state = (w: WorkerInfo) => (w.pid ? `pid ${w.pid}  uptime ${w.uptime ?? '-'} s` : `not running${w.last_exit ? ` (last exit: ${w.last_exit})` : ''}`);
    rows.forEach(([name, w], i) => console.log(`  ${name.padEnd(24)} ${w.status.padEnd(8)} ${state(w)}${held[i]}`));
    // A host in a fleet: its membership, and why not when another host holds its name or etcd does not answer.
    const fleet = await new MgrClient(p.mgrSock).fleet(5000).catch(() => null);
    const m = fleet?.ok ? fleet.value.member : null;
    if (fleet?.ok && m) console.log(`  fleet ${fleet.value.fleet} as ${fleet.value.host}: ${m.state} since ${m.since}${m.reason ? ` (${m.reason})` : ''}`);
  } catch (err) {
    console.log(`  (socket does not answer: ${(err as Error).message})`);
  }
  return 0;
}

async function zap(root: string): Promise<number> {
  const p = rootPaths(root);
  const pid = await livePid(p.mgrPid);
  if (pid) {
    console.error(`queuemgr: pid ${pid} is alive; use stop`);
    return 1;
  }
  await fsp.rm(p.mgrPid, { force: true });
  await fsp.rm(p.mgrSock, { force: true });
  console.log('queuemgr: zapped stale pid file');
  return 0;
}

/** `rq-mgr reindex <q>`: the queue rebuilds its tag index from every message (rq-beyond §B9.3); prints `ok <(tag, message) pairs>`. */
async function reindex(root: string, queue: string | undefined): Promise<number> {
  const problem = queue === undefined ? 'queue name: expected a queue name (rq-mgr reindex <queue>), received nothing' : queueNameProblem(queue);
  if (problem !== null || queue === undefined) {
    console.error(`rq-mgr: reindex: ${problem}`);
    return 1;
  }
  try {
    const a = await ask(root, queue, (c) => c.reindexTags(), REINDEX_WAIT_MS);
    console.log(a.ok ? `ok ${a.value}` : replyLine(a));
    return a.ok ? 0 : 1;
  } catch (err) {
    // ask's errors name the queue: `queue not found: q`, `queue q: its process does not answer (…)`.
    console.error(`rq-mgr: reindex: ${(err as Error).message}`);
    return 1;
  }
}

/** `prog` names the program in errors: rq-init runs `main(['run', …], 'rq-init')`. */
export async function main(argv: string[], prog = 'rq-mgr'): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    console.log(prog === 'rq-init' ? INIT_HELP : MGR_HELP);
    return 0;
  }
  const { command, opts, rest } = parseArgs(argv, { flags: new Set(['watch-stdin']) });
  if (!command) {
    console.error(`${USAGE}\n(rq-mgr --help explains each command)`);
    return 1;
  }
  const rootFlag = typeof opts.root === 'string' ? opts.root : undefined;
  const root = resolveRoot(rootFlag);
  const problem = mgrLineProblem(opts, rest, command, root, rootFlag);
  if (problem !== null) {
    console.error(`${prog}: ${problem}`);
    return 1;
  }
  const waitS = stopWait(opts.timeout);
  if (typeof waitS === 'string') {
    console.error(waitS);
    return 1;
  }
  switch (command) {
    case 'start':
      return (await configRefused(root)) ?? start(root);
    case 'stop':
      return stop(root, waitS);
    case 'restart': {
      // Checked before the stop: a config rq-mgr would refuse must not take down the one that runs.
      const refused = await configRefused(root, ' (the running rq-mgr, if any, is left as it is)');
      if (refused !== undefined) return refused;
      await stop(root, waitS);
      return start(root);
    }
    case 'status':
      return status(root);
    case 'zap':
      return zap(root);
    case 'reindex':
      return reindex(root, rest[0]);
    case 'run': {
      const { runMgr } = await import('../mgr/mgr-main.js');
      // --watch-stdin: whoever started us holds our stdin, and its EOF stops us (test harnesses).
      return runMgr({ root, watchStdin: opts['watch-stdin'] === true });
    }
    default: {
      const near = closest(String(command), COMMANDS);
      console.error(`rq-mgr: unknown command ${JSON.stringify(command)}${near ? `; did you mean ${JSON.stringify(near)}?` : ''}; ${USAGE}`);
      return 1;
    }
  }
}

// Run directly (`node dist/cli/rq-mgr.js run`, as `start` does) as well as through bin/rq-mgr.
if (process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1])) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
