// What the launcher tests share: the two launchers (the child_process gate and the native spawner), the addon and cgroup this machine has, a per-test session that starts scripts and kills what they leave, /proc readers.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { FromScript } from '../../../src/queue/launch/from-script.js';
import { gateLauncher } from '../../../src/queue/launch/gate-launcher.js';
import { ADDON_PATH, nativeLauncher } from '../../../src/queue/launch/native-launcher.js';
import type { ExitInfo, LaunchedChild, Launcher, LaunchRequest } from '../../../src/queue/launch/script-runner.js';
import { ownCgroupHome } from '../../../src/queue/launch/cgroup-fs.js';
import { ScriptEnv } from '../../../src/queue/launch/script-env.js';

export const LINUX = process.platform === 'linux';
/** Every test here takes a few ms; this only bounds a hang. */
export const T = 5000;

type Addon = Parameters<typeof nativeLauncher>[0];
export let addon: Addon | undefined;
export let addonError: unknown;
try {
  addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
} catch (err) {
  addonError = err;
}

/** Where this process's cgroup v2 is, or why tests starting scripts in a cgroup are skipped. */
export const HOME = ownCgroupHome();
export const NO_CGROUPS = !HOME.ok ? HOME.why : fs.existsSync(path.join(HOME.dir, 'cgroup.procs')) ? null : `${HOME.dir} is no cgroup`;
/** This process's cgroup path, as /proc/<pid>/cgroup shows it. */
export const OWN_CGROUP = /^0::(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '';

/** Without the addon the native launcher's tests fail with the load error instead of being skipped. */
export const native: Launcher = addon
  ? nativeLauncher(addon)
  : () => {
      throw new Error(`native addon ${ADDON_PATH} did not load: ${(addonError as Error)?.message}`);
    };

/** Lines of a script's fd 3, awaited one by one, and its whole text once it ends. */
export class Lines {
  private buf = '';
  private readonly queue: string[] = [];
  private readonly waiting: Array<(line: string | null) => void> = [];
  private done = false;
  readonly ended: Promise<string>;
  private all = '';

  constructor(from: FromScript) {
    this.ended = new Promise<string>((resolve) =>
      from.read(
        (chunk) => {
          const s = chunk.toString('utf8');
          this.all += s;
          this.buf += s;
          let i: number;
          while ((i = this.buf.indexOf('\n')) >= 0) {
            this.push(this.buf.slice(0, i));
            this.buf = this.buf.slice(i + 1);
          }
        },
        () => {
          this.done = true;
          if (this.buf) this.push(this.buf);
          for (const w of this.waiting.splice(0)) w(null);
          resolve(this.all);
        },
      ),
    );
  }

  private push(line: string): void {
    const w = this.waiting.shift();
    if (w) w(line);
    else this.queue.push(line);
  }

  /** The next line, or null once the stream has ended. */
  next(): Promise<string | null> {
    if (this.queue.length) return Promise.resolve(this.queue.shift()!);
    if (this.done) return Promise.resolve(null);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

export interface Started {
  child: LaunchedChild;
  fd3: Lines;
  /** The exit without its usage, which only the tests of accounting look at. */
  exited: Promise<ExitInfo>;
  /** The launcher's accounting of the run, once exited has resolved. */
  usage?: ExitInfo['usage'];
  /** Whether exited has resolved: until then the group may still be running and is ours to kill. */
  settled: boolean;
  log: () => string;
  logFile: string;
}

/** A start as tests ask for it: a plain environment is all shared (ScriptEnv.of). */
export type StartOptions = Partial<Omit<LaunchRequest, 'argv' | 'logFd' | 'env'>> & { env?: NodeJS.ProcessEnv | ScriptEnv };

export const HEADER = { time: '2026-11-21 16:43:46 +0000', script: '/queues/my q/run %s $HOME' };

/** A /proc/<pid>/stat line as fields numbered as in proc(5) (1 = pid, 2 = comm, 3 = state, ...). */
export function statFields(line: string): Record<number, string> {
  const close = line.lastIndexOf(')');
  const fields: Record<number, string> = { 1: line.slice(0, line.indexOf(' ')), 2: line.slice(line.indexOf('(') + 1, close) };
  line
    .slice(close + 2)
    .trim()
    .split(' ')
    .forEach((f, i) => (fields[i + 3] = f));
  return fields;
}

/** Running, i.e. present in /proc and not a zombie. */
export function alive(pid: number): boolean {
  try {
    return statFields(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))[3] !== 'Z';
  } catch {
    return false;
  }
}

/** Pids whose parent is this process (zombies included). */
export function myChildren(): Set<number> {
  const out = new Set<number>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (Number(statFields(fs.readFileSync(`/proc/${name}/stat`, 'utf8'))[4]) === process.pid) out.add(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** Bounded poll, for the one case nothing can be awaited: a reparented grandchild being reaped. */
export async function until(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** The launchers every launcher test runs against, for describe.each: [name, launcher]. */
export const LAUNCHERS = [
  ['gate', gateLauncher],
  ['native', native],
] as const;

/**
 * Registers, in the calling describe, a temp dir per test and the kill of every script group a test left running;
 * start launches argv with `launch` (log in the temp dir, fd 3 read as lines), sh a /bin/sh -c script, headerOf the log's RQ START line.
 */
export function launchSession(name: string, launch: Launcher) {
  let dir: string;
  let started: Started[] = [];
  const testSecret = 'RQ_LAUNCHER_TEST_NOT_PASSED';

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), `rq-launch-${name}-`));
    process.env[testSecret] = 'leaked';
  });

  afterEach(async () => {
    delete process.env[testSecret];
    for (const s of started) {
      // Only a group that has not been reaped yet can be ours to kill.
      if (!s.settled && s.child.pid > 0) {
        try {
          process.kill(-s.child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
        await s.exited;
      }
      s.child.fromScript.destroy();
      s.child.toScript.destroy();
    }
    started = [];
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: '/usr/bin:/bin', RQ_TEST_VAR: 'hello world' });

  function start(argv: string[], o: StartOptions = {}): Started {
    const logFile = path.join(dir, `stdio-${started.length}.log`);
    const logFd = fs.openSync(logFile, 'a');
    let child: LaunchedChild;
    try {
      child = launch({
        argv,
        env: o.env instanceof ScriptEnv ? o.env : ScriptEnv.of(o.env ?? baseEnv()),
        cwd: o.cwd ?? dir,
        logFd,
        header: o.header ?? HEADER,
        fileSizeLimit: o.fileSizeLimit,
        cgroup: o.cgroup,
      });
    } finally {
      fs.closeSync(logFd);
    }
    const exited = child.exited.then(({ usage, ...rest }) => {
      s.usage = usage;
      s.settled = true;
      return rest;
    });
    const s: Started = { child, fd3: new Lines(child.fromScript), exited, settled: false, logFile, log: () => fs.readFileSync(logFile, 'utf8') };
    started.push(s);
    return s;
  }

  const sh = (script: string, o?: Parameters<typeof start>[1]) => start(['/bin/sh', '-c', script], o);
  const headerOf = (pid: number) => `\n${pid} - ${HEADER.time} - RQ START - ${HEADER.script}\n`;

  return {
    /** This test's temp dir (set by the beforeEach). */
    get dir(): string {
      return dir;
    },
    testSecret,
    baseEnv,
    start,
    sh,
    headerOf,
  };
}
