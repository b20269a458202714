// Launcher on rq's native spawner (src/queue/launch/native/rq-spawn.c): vfork (clone3 into a run cgroup) + exec, no gate process.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { Logger } from 'pino';
import { RqError } from '../../errors.js';
import { addonPath } from './addon-path.js';
import { gateLauncher } from './gate-launcher.js';
import { rusageOf } from './run-usage.js';
import { findExecutable } from './find-executable.js';
import { NUL_REFUSAL, holdsNul } from './nul-bytes.js';
import type { SharedEnv } from './script-env.js';
import { type ExitInfo, type Launcher, failedLaunch, killGroup, startHeader } from './script-runner.js';
import { type PipeReader, pipeFromScript } from './from-script.js';
import { lazyToScript } from './to-script.js';

/** What envBlock() made: variables converted once, for spawn() to put before a run's own. */
export type EnvBlock = object & { readonly brand: 'EnvBlock' };

export interface SpawnAddon extends PipeReader {
  spawn(
    file: string,
    argv: string[],
    /** The variables shared with other runs, or null; `envp` follows them. */
    envBlock: EnvBlock | null,
    envp: string[],
    cwd: string,
    fds: number[],
    nice: number,
    headerBefore: string | null,
    headerAfter: string | null,
    /** RLIMIT_FSIZE for the child with SIGXFSZ ignored, or -1 for none. */
    fileSizeLimit: number,
    /** The cgroup v2 directory to create the child in (clone3 CLONE_INTO_CGROUP), or null. */
    cgroup: string | null,
    /** fds of cgroup v1 cgroup.procs files the child writes itself into first. */
    joins: number[],
    onExit: (code: number, signal: number, userUs: number, systemUs: number, maxRssKiB: number, inBlocks: number, outBlocks: number) => void,
  ): number;
  pipe(): [number, number];
  /** `entries` (`K=V`) converted once, for every spawn() that passes the block. */
  envBlock(entries: string[]): EnvBlock;
  /** null when the kernel can watch exits through pidfds (Linux 5.3+), else the reason. */
  usable(): string | null;
  /** Which spawn() this build has; absent before the file size limit. */
  abi?: number;
}

/** The addon's `abi` this code calls: 2 since spawn() took the file size limit (max_log_bytes), 3 since the run cgroup, 4 since v1 joins and rusage, 5 since its IO blocks, 6 since envBlock, 7 since readPipe. */
export const ADDON_ABI = 7;

/** Where `npm run build-native` (node-gyp) puts the addon. */
export const ADDON_PATH = addonPath('rq_spawn');

// First name wins: os.constants.signals lists aliases (SIGIOT, SIGPOLL) after the names Node reports.
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>();
for (const [name, n] of Object.entries(os.constants.signals)) if (!SIGNAL_NAMES.has(n)) SIGNAL_NAMES.set(n, name as NodeJS.Signals);

export function nativeLauncher(addon: SpawnAddon): Launcher {
  // Every script's stdin; opened once for the life of the queue process.
  const devNull = fs.openSync('/dev/null', 'r');
  // Each queue environment's shared part, converted for execve once (its SharedEnv lives as long as the queue keeps that config).
  const blocks = new WeakMap<SharedEnv, EnvBlock>();
  return (r) => {
    if (holdsNul(r)) return failedLaunch(NUL_REFUSAL);
    const { shared, own } = r.env.parts();
    let block = shared && blocks.get(shared);
    const file = r.file ?? findExecutable(r.argv[0], r.cwd, r.env.get('PATH'));
    if (!file) return failedLaunch(`spawn ${r.argv[0]} ENOENT`, 'ENOENT');
    const fds: number[] = [];
    try {
      fds.push(...addon.pipe(), ...addon.pipe());
    } catch (err) {
      // Out of fds (EMFILE): reported like a failed exec, so the message waits in que for a retry.
      for (const fd of fds) fs.closeSync(fd);
      return failedLaunch((err as Error).message, (err as NodeJS.ErrnoException).code);
    }
    const [fromFd, childWrite, childRead, toFd] = fds;
    let exit!: (info: ExitInfo) => void;
    const exited = new Promise<ExitInfo>((resolve) => (exit = resolve));
    const header = startHeader('\0', r.header).split('\0');
    let pid: number;
    const joins: number[] = [];
    try {
      if (shared && !block) blocks.set(shared, (block = addon.envBlock(shared.entries)));
      for (const file of r.joins ?? []) joins.push(fs.openSync(file, fs.constants.O_WRONLY));
      pid = addon.spawn(
        file,
        r.argv,
        block ?? null,
        own,
        r.cwd,
        [devNull, r.logFd, r.logFd, childWrite, childRead],
        19,
        header[0],
        header[1],
        r.fileSizeLimit ?? -1,
        r.cgroup ?? null,
        joins,
        (code, signal, userUs, systemUs, maxRssKiB, inBlocks, outBlocks) =>
          exit({
            code: code >= 0 ? code : null,
            signal: signal ? (SIGNAL_NAMES.get(signal) ?? null) : null,
            usage: rusageOf(userUs, systemUs, maxRssKiB, inBlocks, outBlocks, process.resourceUsage().maxRSS),
          }),
      );
    } catch (err) {
      for (const fd of [fromFd, toFd]) fs.closeSync(fd);
      return failedLaunch((err as Error).message, (err as NodeJS.ErrnoException).code);
    } finally {
      for (const fd of [childWrite, childRead, ...joins]) fs.closeSync(fd);
    }
    return {
      pid,
      fromScript: pipeFromScript(fromFd, addon),
      toScript: lazyToScript(toFd),
      exited,
      kill: (signal: NodeJS.Signals) => killGroup(pid, signal),
    };
  };
}

/**
 * The native launcher when its addon is built and `RQ_SPAWN` is not `node`; otherwise the
 * child_process gate, with a warning saying why (both start scripts the same way, the gate slower).
 */
export function chooseLauncher(env: NodeJS.ProcessEnv, log: Logger): Launcher {
  if (env.RQ_SPAWN === 'node') {
    log.info('scripts start through the child_process fallback (RQ_SPAWN=node)');
    return gateLauncher;
  }
  let why: string;
  try {
    const addon = createRequire(import.meta.url)(ADDON_PATH) as SpawnAddon;
    // An addon left from an older build would refuse every spawn: this one can still run scripts.
    if (addon.abi !== ADDON_ABI) throw RqError.of('RQ_ERR_ADDON_STALE', 'rq-spawn.c', addon.abi ?? 1, ADDON_ABI);
    const unusable = addon.usable();
    if (!unusable) {
      log.debug({ addon: ADDON_PATH }, 'scripts start through the native spawner');
      return nativeLauncher(addon);
    }
    why = `this kernel cannot watch exits (${unusable}; needs Linux 5.3 or later)`;
  } catch (err) {
    why = `${(err as Error).message} (npm run build-native builds it)`;
  }
  log.warn({ addon: ADDON_PATH, why }, 'native spawner not usable; scripts start through the child_process fallback');
  return gateLauncher;
}
