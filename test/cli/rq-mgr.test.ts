// bin/rq-mgr stop against a supervisor that does not stop on TERM (src/cli/rq-mgr.ts): KILL after --timeout, its files cleaned, "stopped".
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { type TestRoot, makeRoot } from '../helpers/rq-root.js';

/**
 * Stands in for an rq-mgr stuck in its shutdown: its command line names rq-mgr (so `stop` takes its
 * pid file for a live supervisor), and on TERM it does what rq-mgr's shutdown does last, removing
 * its pid file, and then never exits.
 */
const STUCK = `
import fs from 'node:fs';
const [pidFile, sock] = process.argv.slice(2);
fs.writeFileSync(pidFile, process.pid + '\\n');
fs.writeFileSync(sock, '');
process.on('SIGTERM', () => {
  fs.rmSync(pidFile, { force: true });
  process.stdout.write('term\\n');
});
setInterval(() => undefined, 1 << 30);
process.stdout.write('ready\\n');
`;

let t: TestRoot;
let stuck: ChildProcess | undefined;
beforeEach(async () => {
  t = await makeRoot();
});
afterEach(async () => {
  if (stuck && stuck.exitCode === null && stuck.signalCode === null) stuck.kill('SIGKILL');
  await t.cleanup();
});

/** Resolves when the child has written `line` on stdout. */
function saidLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.split('\n').includes(line)) resolve();
    });
    child.once('exit', () => reject(new Error(`exited before saying ${line}: ${out}`)));
  });
}

describe('rq-mgr stop', () => {
  it('KILLs a supervisor that ignores TERM, cleans its pid file and socket even when it already removed the pid file, and says stopped', async () => {
    const p = rootPaths(t.root);
    const script = path.join(t.root, 'stuck-rq-mgr.mjs');
    await fs.writeFile(script, STUCK);
    stuck = spawn(process.execPath, [script, p.mgrPid, p.mgrSock], { stdio: ['ignore', 'pipe', 'inherit'] });
    await saidLine(stuck, 'ready');
    const gone = new Promise<NodeJS.Signals | null>((r) => stuck!.once('exit', (_code, signal) => r(signal)));
    const termed = saidLine(stuck, 'term');

    const stopped = await run(BIN('rq-mgr'), ['stop', '--timeout', '1', '--root', t.root]);
    await termed;
    expect(await gone).toBe('SIGKILL');
    expect(stopped.stderr).toBe(`queuemgr: pid ${stuck.pid} did not stop within 1 s; sending SIGKILL (its queues stop when they see it gone)\n`);
    expect(stopped.stdout).toBe(`queuemgr: stopped (pid ${stuck.pid})\n`);
    expect(existsSync(p.mgrPid)).toBe(false);
    expect(existsSync(p.mgrSock)).toBe(false);
  });

  it('refuses a --timeout that is not whole seconds 1-3600, and stops nothing', async () => {
    for (const bad of ['0', '1.5', 'x', '3601']) {
      const r: { code?: number; stderr: string } = await run(BIN('rq-mgr'), ['stop', '--timeout', bad, '--root', t.root]).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect([r.code, r.stderr]).toEqual([1, `rq-mgr: --timeout: expected whole seconds 1-3600, received ${JSON.stringify(bad)}\n`]);
    }
  });
});
