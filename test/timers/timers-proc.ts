// Test harness: a real timers process (dist/timers/timers-main.js) in a temp root, and timer files linked into it.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { rootPaths } from '../../src/config/paths.js';
import { rq2Command } from '../../src/ipc/rq1.js';
import { PROJECT, waitFor } from '../helpers/rq-root.js';

export interface TimersStatus {
  sent: number;
  errors: number;
  invalid: number;
}

export class TimersProc {
  private constructor(
    readonly root: string,
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {}

  /** Starts the process with RQ_ENV=test (short periods allowed) unless `env` says otherwise. */
  static async start(root: string, env: NodeJS.ProcessEnv = { RQ_ENV: 'test' }): Promise<TimersProc> {
    const logFile = path.join(root, 'log', 'timers.log');
    const fd = fs.openSync(logFile, 'a');
    const base = { ...process.env };
    delete base.RQ_ENV;
    const child = spawn(process.execPath, [path.join(PROJECT, 'dist', 'timers', 'timers-main.js'), '--root', root, '--watch-stdin'], {
      stdio: ['pipe', fd, fd],
      env: { ...base, RQ_LOG_LEVEL: 'debug', ...env },
    });
    fs.closeSync(fd);
    const t = new TimersProc(root, child, logFile);
    let exited = false;
    child.once('exit', () => (exited = true));
    await waitFor(async () => {
      if (exited) throw new Error(`timers process exited; see ${logFile}`);
      return (await t.cmd('get_status'))[0] === 'ok';
    }, 'timers process to answer get_status');
    return t;
  }

  cmd(command: string, payload?: unknown): Promise<unknown[]> {
    return rq2Command(rootPaths(this.root).timersSock, command, payload, { timeoutMs: 5000 });
  }

  async status(): Promise<TimersStatus> {
    return (await this.cmd('get_status'))[1] as TimersStatus;
  }

  async timers(): Promise<[string, number][]> {
    return (await this.cmd('get_timers'))[1] as [string, number][];
  }

  /** The JSON log lines written so far. */
  async logLines(): Promise<Record<string, unknown>[]> {
    const text = await fsp.readFile(this.logFile, 'utf8');
    return text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async stop(): Promise<void> {
    if (!this.alive()) return;
    const gone = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await gone;
  }
}

/** Writes a definition under <root>/defs/ and links it as timers/<link>; returns the definition's path. */
export async function linkTimer(root: string, link: string, def: unknown): Promise<string> {
  const defs = path.join(root, 'defs');
  await fsp.mkdir(defs, { recursive: true });
  const file = path.join(defs, link);
  await fsp.writeFile(file, typeof def === 'string' ? def : JSON.stringify(def));
  await fsp.symlink(file, path.join(rootPaths(root).timers, link));
  return file;
}
