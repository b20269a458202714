// Test harness: a real rq-mgr (bin/rq-mgr run) in the foreground of a temp root.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { mgrCommand, queueCommand } from '../../src/ipc/rq1.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { PROJECT, waitFor } from './rq-root.js';

export const run = promisify(execFile);
export const BIN = (name: string) => path.join(PROJECT, 'bin', name);

export class MgrProc {
  private constructor(
    readonly root: string,
    readonly child: ChildProcess,
  ) {}

  /** `env`: more environment for rq-mgr, which its queues inherit (a crash point's, say). */
  static async start(root: string, opts: { env?: NodeJS.ProcessEnv } = {}): Promise<MgrProc> {
    const log = fs.openSync(path.join(root, 'log', 'mgr-test.log'), 'a');
    // Its stdin is a pipe only this test process holds: rq-mgr stops if the test runner dies.
    const child = spawn(BIN('rq-mgr'), ['run', '--root', root, '--watch-stdin'], { stdio: ['pipe', log, log], env: { ...process.env, ...opts.env } });
    fs.closeSync(log);
    const m = new MgrProc(root, child);
    // Generous: several rq-mgrs starting at once on two cores (a fleet test's hosts) can each take seconds.
    await waitFor(async () => (await m.cmd('ping'))[0] === 'pong', 'rq-mgr to answer ping', 30_000);
    return m;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async cmd(command: string, arg = ''): Promise<any> {
    return mgrCommand(rootPaths(this.root).mgrSock, command, arg, { timeoutMs: 10_000 });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async q(name: string, command: string, arg: unknown = {}): Promise<any> {
    return queueCommand(queuePaths(this.root, name).sock, command, arg, { timeoutMs: 10_000 });
  }

  async waitQueueUp(name: string, timeoutMs = 20_000): Promise<number> {
    return waitFor(
      async () => {
        const r = await this.q(name, 'ping');
        // Only a whole pid: a pid file read while it is being written gives '' (0), and a caller that
        // kills pid 0 kills its own process group, the test runner with it.
        const pid = r[0] === 'pong' ? Number(fs.readFileSync(queuePaths(this.root, name).pidFile, 'utf8')) : 0;
        return Number.isInteger(pid) && pid > 1 ? pid : false;
      },
      `queue ${name} to answer`,
      timeoutMs,
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const gone = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await gone;
    }
  }
}

export async function install(root: string, port: number): Promise<void> {
  await run(BIN('rq-install'), ['--root', root, '--port', String(port), '--env', 'test']);
}
