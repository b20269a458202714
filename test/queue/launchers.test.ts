// Launchers: the child_process gate and the native spawner must start scripts the same way
// (header, nice, session, fds 3/4, stdin, cwd, env, signals, exit, start failures). Real processes.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { gateLauncher } from '../../src/queue/gate-launcher.js';
import { ADDON_ABI, ADDON_PATH, chooseLauncher, nativeLauncher } from '../../src/queue/native-launcher.js';
import type { ExitInfo, LaunchedChild, Launcher, LaunchRequest } from '../../src/queue/script-runner.js';
import { killAll, ownCgroupHome, removeCgroup } from '../../src/queue/cgroup-fs.js';

const LINUX = process.platform === 'linux';
/** Every test here takes a few ms; this only bounds a hang. */
const T = 5000;

type Addon = Parameters<typeof nativeLauncher>[0];
let addon: Addon | undefined;
let addonError: unknown;
try {
  addon = createRequire(import.meta.url)(ADDON_PATH) as Addon;
} catch (err) {
  addonError = err;
}

/** Where this process's cgroup v2 is, or why tests starting scripts in a cgroup are skipped. */
const HOME = ownCgroupHome();
const NO_CGROUPS = !HOME.ok ? HOME.why : fs.existsSync(path.join(HOME.dir, 'cgroup.procs')) ? null : `${HOME.dir} is no cgroup`;
/** This process's cgroup path, as /proc/<pid>/cgroup shows it. */
const OWN_CGROUP = /^0::(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '';

/** Without the addon the native launcher's tests fail with the load error instead of being skipped. */
const native: Launcher = addon
  ? nativeLauncher(addon)
  : () => {
      throw new Error(`native addon ${ADDON_PATH} did not load: ${(addonError as Error)?.message}`);
    };

describe('native addon', () => {
  it.runIf(LINUX)('loads on Linux (a broken native build must fail, not fall back)', () => {
    expect(addonError).toBeUndefined();
    expect(typeof addon?.spawn).toBe('function');
    expect(typeof addon?.pipe).toBe('function');
    expect(addon?.abi).toBe(ADDON_ABI);
    // This machine's kernel watches exits through pidfds; an older one makes chooseLauncher fall back.
    expect(addon?.usable()).toBeNull();
  });
});

/** Lines of a stream, awaited one by one, and its whole text once it ends. */
class Lines {
  private buf = '';
  private readonly queue: string[] = [];
  private readonly waiting: Array<(line: string | null) => void> = [];
  private done = false;
  readonly ended: Promise<string>;
  private all = '';

  constructor(stream: Readable) {
    stream.on('error', () => undefined);
    stream.on('data', (chunk: Buffer) => {
      const s = chunk.toString('utf8');
      this.all += s;
      this.buf += s;
      let i: number;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        this.push(this.buf.slice(0, i));
        this.buf = this.buf.slice(i + 1);
      }
    });
    this.ended = new Promise<string>((resolve) => {
      const finish = () => {
        if (!this.done) {
          this.done = true;
          if (this.buf) this.push(this.buf);
          for (const w of this.waiting.splice(0)) w(null);
        }
        resolve(this.all);
      };
      stream.once('end', finish);
      stream.once('close', finish);
    });
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

interface Started {
  child: LaunchedChild;
  fd3: Lines;
  exited: Promise<ExitInfo>;
  /** Whether exited has resolved: until then the group may still be running and is ours to kill. */
  settled: boolean;
  log: () => string;
  logFile: string;
}

const HEADER = { time: '2026-11-21 16:43:46 +0000', script: '/queues/my q/run %s $HOME' };

/** A /proc/<pid>/stat line as fields numbered as in proc(5) (1 = pid, 2 = comm, 3 = state, ...). */
function statFields(line: string): Record<number, string> {
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
function alive(pid: number): boolean {
  try {
    return statFields(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))[3] !== 'Z';
  } catch {
    return false;
  }
}

/** Pids whose parent is this process (zombies included). */
function myChildren(): Set<number> {
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
async function until(cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

describe.each([
  ['gate', gateLauncher],
  ['native', native],
] as const)('%s launcher', (name, launch) => {
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

  function start(argv: string[], o: Partial<Omit<LaunchRequest, 'argv' | 'logFd'>> = {}): Started {
    const logFile = path.join(dir, `stdio-${started.length}.log`);
    const logFd = fs.openSync(logFile, 'a');
    let child: LaunchedChild;
    try {
      child = launch({ argv, env: o.env ?? baseEnv(), cwd: o.cwd ?? dir, logFd, header: o.header ?? HEADER, fileSizeLimit: o.fileSizeLimit, cgroup: o.cgroup });
    } finally {
      fs.closeSync(logFd);
    }
    child.toScript.on('error', () => undefined);
    const s: Started = { child, fd3: new Lines(child.fromScript), exited: child.exited, settled: false, logFile, log: () => fs.readFileSync(logFile, 'utf8') };
    void child.exited.then(() => (s.settled = true));
    started.push(s);
    return s;
  }

  const sh = (script: string, o?: Parameters<typeof start>[1]) => start(['/bin/sh', '-c', script], o);
  const headerOf = (pid: number) => `\n${pid} - ${HEADER.time} - RQ START - ${HEADER.script}\n`;

  it(
    'writes the RQ START header with the script pid to the log before anything the script prints',
    async () => {
      const s = sh('echo out; echo err >&2');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.child.pid).toBeGreaterThan(0);
      expect(s.log()).toBe(`${headerOf(s.child.pid)}out\nerr\n`);
    },
    T,
  );

  it(
    'runs the script at nice 19 from its first instruction, in its own session and process group',
    async () => {
      // cat is the script itself (no shell in between): its own stat is what it started with.
      const s = start(['/bin/cat', '/proc/self/stat']);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const log = s.log();
      const header = headerOf(s.child.pid);
      expect(log.startsWith(header)).toBe(true);
      const f = statFields(log.slice(header.length).trim());
      expect(Number(f[1])).toBe(s.child.pid);
      expect(f[19]).toBe('19');
      expect(Number(f[5])).toBe(s.child.pid); // pgrp
      expect(Number(f[6])).toBe(s.child.pid); // session
    },
    T,
  );

  it(
    'delivers lines the script writes on fd 3 to fromScript, ending when the script exits',
    async () => {
      const s = sh('echo "one $$" >&3; echo two >&3');
      expect(await s.fd3.next()).toBe(`one ${s.child.pid}`);
      expect(await s.fd3.next()).toBe('two');
      expect(await s.fd3.next()).toBeNull();
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'delivers lines written to toScript on the script fd 4',
    async () => {
      const s = sh('echo ready >&3; read x <&4; echo "got $x" >&3');
      expect(await s.fd3.next()).toBe('ready');
      s.child.toScript.write('hello there\n');
      expect(await s.fd3.next()).toBe('got hello there');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'gives the script EOF on fd 4 once toScript is ended',
    async () => {
      const s = sh('echo ready >&3; if read x <&4; then echo "line $x" >&3; else echo "eof4 $x" >&3; fi');
      expect(await s.fd3.next()).toBe('ready');
      s.child.toScript.end();
      expect(await s.fd3.next()).toBe('eof4 ');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'starts the script with stdin at EOF',
    async () => {
      const s = sh('cat; echo eof >&3');
      expect(await s.fd3.next()).toBe('eof');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.log()).toBe(headerOf(s.child.pid));
    },
    T,
  );

  it(
    'runs the script in r.cwd',
    async () => {
      const cwd = path.join(dir, 'job dir');
      fs.mkdirSync(cwd);
      const s = sh('pwd -P >&3', { cwd });
      expect(await s.fd3.next()).toBe(fs.realpathSync(cwd));
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'gives the script exactly the environment passed, not the daemon environment',
    async () => {
      expect(process.env[testSecret]).toBe('leaked');
      const env = { ...baseEnv(), EMPTY_VAR: '', UNDEFINED_VAR: undefined, MULTI: 'a=b c' };
      const s = sh('echo "$RQ_TEST_VAR|${RQ_LAUNCHER_TEST_NOT_PASSED-unset}" >&3; cat /proc/$$/environ >&3', { env });
      const text = await s.fd3.ended;
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const [first, environ] = [text.slice(0, text.indexOf('\n')), text.slice(text.indexOf('\n') + 1)];
      expect(first).toBe('hello world|unset');
      // The environment the script was exec'd with.
      const got = Object.fromEntries(
        environ
          .split('\0')
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      const want = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined));
      // The gate execs the script from /bin/sh, which exports PWD; tolerated only as the real cwd.
      if (!('PWD' in want) && 'PWD' in got) {
        expect(got.PWD).toBe(dir);
        delete got.PWD;
      }
      expect(got).toEqual(want);
    },
    T,
  );

  it(
    'starts the script with default signal dispositions (SIGPIPE not ignored) and no signal blocked',
    async () => {
      // Node itself ignores SIGPIPE and SIGXFSZ: this fails if a launcher does not reset them.
      expect(fs.readFileSync('/proc/self/status', 'utf8')).toMatch(/^SigIgn:\s*0*[1-9a-f][0-9a-f]*$/m);
      // grep is the script itself: a shell reading its own /proc/$$/status through a child would
      // race with dash, which blocks all signals around its own forks.
      const s = start(['grep', '-E', '^Sig(Ign|Blk):', '/proc/self/status']);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const header = headerOf(s.child.pid);
      const text = s.log();
      expect(text.startsWith(header)).toBe(true);
      const ign = BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(text)![1]}`);
      const blk = BigInt(`0x${/^SigBlk:\s*([0-9a-f]+)$/m.exec(text)![1]}`);
      expect(ign & (1n << 12n), text).toBe(0n); // SIGPIPE (13)
      expect(ign, text).toBe(0n);
      expect(blk, text).toBe(0n);
    },
    T,
  );

  it(
    'reports the exit code',
    async () => {
      const s = sh('exit 7');
      expect(await s.exited).toEqual({ code: 7, signal: null });
    },
    T,
  );

  it(
    'reports death by a signal',
    async () => {
      const s = sh('kill -TERM $$');
      expect(await s.exited).toEqual({ code: null, signal: 'SIGTERM' });
    },
    T,
  );

  it.each([
    ['ABRT', 'SIGABRT'],
    ['IO', 'SIGIO'],
  ])(
    'names signal %s as Node does (%s)',
    async (sig, expected) => {
      const s = sh(`ulimit -c 0; kill -${sig} $$`);
      expect(await s.exited).toEqual({ code: null, signal: expected });
    },
    T,
  );

  it(
    'kills the whole process group, grandchildren included, with process.kill(-pid)',
    async () => {
      const s = sh('sleep 30 </dev/null >/dev/null 2>&1 3>&- 4>&- & echo $! >&3; wait');
      const grandchild = Number(await s.fd3.next());
      expect(grandchild).toBeGreaterThan(0);
      expect(alive(grandchild)).toBe(true);
      expect(Number(statFields(fs.readFileSync(`/proc/${grandchild}/stat`, 'utf8'))[5])).toBe(s.child.pid);
      process.kill(-s.child.pid, 'SIGKILL');
      expect(await s.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(alive(s.child.pid)).toBe(false);
      // The grandchild is reparented and reaped by someone else: wait for that, bounded.
      expect(await until(() => !alive(grandchild))).toBe(true);
    },
    T,
  );

  it(
    'reports an argv[0] that does not exist as a spawnError (ENOENT), without throwing',
    async () => {
      for (const argv0 of [path.join(dir, 'no-such-script'), 'rq-no-such-command-on-path']) {
        let s: Started | undefined;
        expect(() => (s = start([argv0, 'arg']))).not.toThrow();
        expect(await s!.exited, argv0).toEqual({ code: null, signal: null, spawnError: expect.stringMatching(/ENOENT/), spawnCode: 'ENOENT' });
      }
    },
    T,
  );

  it(
    'reports an exec the kernel refuses (the file still open for writing: ETXTBSY) with an errno name, without throwing',
    async () => {
      const file = path.join(dir, 'busy.sh');
      fs.writeFileSync(file, '#!/bin/sh\necho ran >&3\n', { mode: 0o755 });
      const writer = fs.openSync(file, 'r+');
      try {
        let s: Started | undefined;
        expect(() => (s = start([file]))).not.toThrow();
        const info = await s!.exited;
        // sh only says 126 (found, not executable): the gate cannot name the errno more closely.
        expect(info).toMatchObject(name === 'native' ? { spawnCode: 'ETXTBSY', spawnError: expect.stringMatching(/exec: Text file busy/) } : { spawnCode: 'EACCES', spawnError: expect.stringMatching(/could not exec/) });
      } finally {
        fs.closeSync(writer);
      }
    },
    T,
  );

  it(
    'a script exiting 126 or 127 itself has exited, not failed to start',
    async () => {
      expect(await sh('exit 126').exited).toEqual({ code: 126, signal: null });
      expect(await sh('exit 127').exited).toEqual({ code: 127, signal: null });
    },
    T,
  );

  it(
    'finds a bare argv[0] through env.PATH',
    async () => {
      const s = start(['sh', '-c', 'echo ok >&3'], { env: { PATH: '/usr/bin:/bin' } });
      expect(await s.fd3.next()).toBe('ok');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'with a fileSizeLimit, stops the log at that size after the header: writes past it fail with EFBIG (no SIGXFSZ), the script and its children go on',
    async () => {
      // head is a child of the script: the limit and the ignored SIGXFSZ are inherited. Killed by
      // SIGXFSZ, sh would report 153; a write refused with EFBIG makes head exit 1.
      const s = sh('head -c 10000 /dev/zero; echo "head $?" >&3; echo more; echo "echo $?" >&3', { fileSizeLimit: 4096 });
      expect(await s.fd3.next()).toBe('head 1');
      expect(await s.fd3.next()).toBe('echo 1');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const log = fs.readFileSync(s.logFile);
      expect(log.length).toBe(4096);
      expect(log.subarray(0, headerOf(s.child.pid).length).toString()).toBe(headerOf(s.child.pid));
      expect(log.subarray(headerOf(s.child.pid).length).every((b) => b === 0)).toBe(true);
    },
    T,
  );

  it(
    'reports a cwd that does not exist as a spawnError and leaves nothing running',
    async () => {
      const before = myChildren();
      let s: Started | undefined;
      expect(() => (s = sh('echo ran >&3; sleep 30', { cwd: path.join(dir, 'missing') }))).not.toThrow();
      const info = await s!.exited;
      expect(typeof info.spawnError).toBe('string');
      expect(info.spawnError!.length).toBeGreaterThan(0);
      if (s!.child.pid > 0) expect(alive(s!.child.pid)).toBe(false);
      const leftover = [...myChildren()].filter((pid) => !before.has(pid));
      expect(leftover).toEqual([]);
    },
    T,
  );

  describe.skipIf(NO_CGROUPS !== null)(`with a cgroup${NO_CGROUPS ? ` (skipped: ${NO_CGROUPS})` : ''}`, () => {
    const cgroupName = `rq-launch-test-${process.pid}-${name}`;
    const cgroup = HOME.ok ? path.join(HOME.dir, cgroupName) : '';

    beforeEach(() => fs.mkdirSync(cgroup));
    afterEach(async () => {
      killAll(cgroup);
      await removeCgroup(cgroup, T);
    });

    it(
      'starts the script in r.cgroup, where what it forks stays even in a session of its own',
      async () => {
        const s = sh('grep ^0:: /proc/self/cgroup >&3; setsid sh -c "grep ^0:: /proc/self/cgroup" >&3', { cgroup });
        const text = await s.fd3.ended;
        expect(await s.exited).toEqual({ code: 0, signal: null });
        const want = `0::${path.posix.join(OWN_CGROUP, cgroupName)}`;
        expect(text).toBe(`${want}\n${want}\n`);
        expect(s.log()).toBe(headerOf(s.child.pid));
      },
      T,
    );

    it(
      'reports a cgroup it cannot start the script in as a spawnError, the script never run',
      async () => {
        const s = sh('echo ran >&3', { cgroup: path.join(cgroup, 'missing') });
        expect(await s.exited).toMatchObject({ spawnCode: 'ENOENT', spawnError: expect.stringMatching(/cgroup/) });
        expect(await s.fd3.ended).toBe('');
      },
      T,
    );

    it(
      "reports a failure of the child's setup in the cgroup as without one (the native child runs on a stack of its own there)",
      async () => {
        const s = sh('echo ran >&3', { cgroup, cwd: path.join(dir, 'missing') });
        const info = await s.exited;
        expect(info).toMatchObject({ spawnCode: 'ENOENT', spawnError: name === 'native' ? 'rq-spawn: chdir: No such file or directory' : expect.any(String) });
        expect(await s.fd3.ended).toBe('');
      },
      T,
    );
  });
});

describe('chooseLauncher', () => {
  it('returns the gate launcher when RQ_SPAWN=node', () => {
    const log = pino({ level: 'silent' });
    const warn = vi.spyOn(log, 'warn');
    expect(chooseLauncher({ RQ_SPAWN: 'node' }, log)).toBe(gateLauncher);
    expect(warn).not.toHaveBeenCalled();
  });

  it.runIf(LINUX)('returns the native launcher otherwise on Linux, without a warning', () => {
    const log = pino({ level: 'silent' });
    const warn = vi.spyOn(log, 'warn');
    const chosen = chooseLauncher({}, log);
    expect(typeof chosen).toBe('function');
    expect(chosen).not.toBe(gateLauncher);
    expect(warn).not.toHaveBeenCalled();
  });
});
