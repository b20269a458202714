// bin/rq-mgr (src/cli/rq-mgr.ts): stop against a supervisor that does not stop on TERM (KILL after --timeout, its files cleaned, "stopped"), a refused config, status.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

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

  it('names the command a misspelt one was meant to be', async () => {
    const r: { code?: number; stderr: string } = await run(BIN('rq-mgr'), ['stopp', '--root', t.root]).catch((e: { code: number; stderr: string }) => e);
    expect([r.code, r.stderr]).toEqual([1, expect.stringMatching(/^rq-mgr: unknown command "stopp"; did you mean "stop"\?; usage: rq-mgr start\|stop/)]);
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

describe('rq-mgr start and restart with a config.json it refuses', () => {
  const mgr = (...args: string[]) =>
    run(BIN('rq-mgr'), [...args, '--root', t.root]).then(
      (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
    );
  const QUEUES = ['zeta', 'alpha', 'mike', 'bravo', 'kilo'];
  const PORT_REFUSAL = /^rq-mgr: config\/config.json: port: expected a port number 1-65535 .*received "abc"/;

  it('start on a directory that is no rq root yet says how to make it one; status says so too (4, unknown), not "not running"', async () => {
    await fs.rm(rootPaths(t.root).configFile);
    const told = `rq-mgr: ${t.root} is no rq root yet (no config/config.json): bin/rq-install --root ${t.root} makes it one\n`;
    expect(await mgr('start')).toMatchObject({ code: 1, err: told });
    expect(await mgr('status')).toEqual({ code: 4, out: '', err: told });
  });

  it('start tells at once of an rq-mgr that exits as it starts (a root whose queues/ is a file), with its exit', async () => {
    await fs.rm(path.join(t.root, 'queues'), { recursive: true });
    await fs.writeFile(path.join(t.root, 'queues'), '');
    const r = await mgr('start');
    expect([r.code, r.err]).toEqual([1, `queuemgr: did not come up (exit 1); see ${path.join(t.root, 'log', 'queuemgr.log')}\n`]);
  });

  it('start reads the files the fleet block names: an etcd CA it cannot read is said in words, and nothing starts', async () => {
    const file = rootPaths(t.root).configFile;
    const fleet = { name: 'p', etcd: ['https://127.0.0.1:2379'], advertise: 'http://127.0.0.1:3333/', etcd_ca: path.join(t.root, 'no-ca.pem') };
    await fs.writeFile(file, JSON.stringify({ ...JSON.parse(await fs.readFile(file, 'utf8')), fleet }));
    const r = await mgr('start');
    expect([r.code, r.err]).toEqual([1, `rq-mgr: config/config.json: fleet.etcd_ca: ${JSON.stringify(fleet.etcd_ca)} cannot be read: no such file\n`]);
    expect(existsSync(rootPaths(t.root).mgrPid)).toBe(false);
  });

  it('start says why and starts nothing; restart says why and leaves the running rq-mgr running; status lists the queues by name', async () => {
    for (const q of QUEUES) await addQueue(t.root, q);
    // kilo's socket is another process's: its queue process cannot start, and status says how it last ended, not an empty pid.
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(queuePaths(t.root, 'kilo').sock, resolve));
    const file = rootPaths(t.root).configFile;
    const good = await fs.readFile(file, 'utf8');
    await fs.writeFile(file, JSON.stringify({ ...JSON.parse(good), port: 'abc' }));
    const refused = await mgr('start');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(PORT_REFUSAL);
    expect(existsSync(rootPaths(t.root).mgrPid)).toBe(false);

    await fs.writeFile(file, good);
    const started = await mgr('start');
    const pid = /^queuemgr: process with pid (\d+) started\./.exec(started.out)?.[1];
    expect([started.code, pid]).toEqual([0, expect.stringMatching(/^\d+$/)]);
    try {
      await fs.writeFile(file, JSON.stringify({ ...JSON.parse(good), port: 'abc' }));
      const restart = await mgr('restart');
      expect(restart.code).toBe(1);
      expect(restart.err).toMatch(PORT_REFUSAL);
      expect(restart.err).toContain('(the running rq-mgr, if any, is left as it is)');
      const status = (await mgr('status')).out;
      expect(status).toMatch(new RegExp(`^queuemgr: running \\[pid ${pid}\\]`));
      // Queues by name, whatever order they started in, then the other workers.
      const names = status.split('\n').flatMap((l) => /^ {2}(\S+) +[A-Z]+ /.exec(l)?.[1] ?? []);
      expect(names).toEqual([...QUEUES].sort().concat(names.filter((n) => n.startsWith('['))));
      expect(names.filter((n) => n.startsWith('['))).toEqual(expect.arrayContaining(['[timers]']));
      const kilo = await waitFor(async () => /^ {2}kilo +(BACKOFF|ERROR) .*$/m.exec((await mgr('status')).out)?.[0], 'kilo to have died once');
      expect(kilo).toMatch(/^ {2}kilo +(BACKOFF|ERROR) +not running \(last exit: exit 1\)$/);
    } finally {
      squatter.close();
      await fs.writeFile(file, good);
      await mgr('stop');
    }
  });
});
