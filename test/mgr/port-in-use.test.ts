// The web's port held by another program (a real listener of this test): rq-mgr says so once at warn with the fix, retries the web with a growing back-off (never ERROR), npm start does not claim the URL, rq doctor names the problem and the fix, and the web serves once the port is free, or on the port the fix chose.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mgrCommand } from '../../src/ipc/rq1.js';
import { rootPaths } from '../../src/config/paths.js';
import { runRq } from '../helpers/rq-cli.js';
import { PROJECT, type TestRoot, addQueue, freePort, makeRoot, waitFor } from '../helpers/rq-root.js';
import { stopChild } from '../helpers/process-groups.js';

let t: TestRoot;
let holder: net.Server;
let child: ChildProcess | undefined;
let out = '';

beforeEach(async () => {
  const port = await freePort();
  holder = net.createServer((s) => s.end('HTTP/1.0 200 OK\r\n\r\nnot rq\n'));
  await new Promise<void>((r) => holder.listen(port, '127.0.0.1', r));
  t = await makeRoot({ port });
  await addQueue(t.root, 'a');
  out = '';
});
afterEach(async () => {
  await stopChild(child);
  child = undefined;
  await new Promise((r) => holder.close(r));
  await t.cleanup();
});

type Line = { level: number; msg: string; worker?: string; web?: string; restart_in_ms?: number };
const jsonLines = (): Line[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
const webStatus = async () =>
  (
    (await mgrCommand(rootPaths(t.root).mgrSock, 'status', '', { timeoutMs: 5000 })) as [
      string,
      Record<string, { status: string; restarts: number; problem?: { reason: string; fix: string } }>,
    ]
  )[1]['[web]'];

/** npm start as a user runs it, into a pipe (JSON lines), at debug to see each retry's delay; resolves once it says it is ready. */
async function startRq(): Promise<void> {
  child = spawn(process.execPath, [path.join(PROJECT, 'bin', 'rq-start'), '--root', t.root], {
    env: { ...process.env, RQ_LOG_LEVEL: 'debug', RQ_LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  // npm start says it is ready once it has heard rq-mgr's own line: the two come on one pipe, in that order.
  await waitFor(() => jsonLines().some((l) => l.msg === 'rq-mgr started') && /^rq: ready/m.test(out), 'rq-mgr and npm start to say they are ready', 30_000);
}

describe('the web port in use by another program', () => {
  it('is said once with its fix, retried with back-off, named by rq doctor; the web serves once the port is free', async () => {
    await startRq();

    const inUse = `port ${t.port} on 127.0.0.1 is in use by another program`;
    const fix = `choose another with bin/rq-install --port N --force --root ${t.root}`;
    // npm start's own lines never show the URL another program answers on.
    const said = out.split('\n').filter((l) => l.startsWith('rq: '));
    expect(said.join('\n')).not.toContain(`http://127.0.0.1:${t.port}`);
    expect(said.at(-1)).toMatch(new RegExp(`^rq: ready, without the web UI: ${inUse}; ${fix.replace(/[.+]/g, '\\$&')}`));
    expect(jsonLines().find((l) => l.msg === 'rq-mgr started')?.web).toBe(`not up: ${inUse}`);

    await waitFor(async () => ((await webStatus())?.restarts ?? 0) >= 4, 'the web to be tried 4 more times', 30_000);
    const warned = jsonLines().filter((l) => l.level >= 40);
    expect(warned.map((l) => l.msg)).toEqual([expect.stringContaining(`${inUse}; ${fix}`)]);
    expect(jsonLines().filter((l) => l.msg === 'died; restarting' && l.worker === '[web]')).toEqual([]);
    // Each retry waits twice as long as the one before: no tight loop.
    const delays = jsonLines()
      .filter((l) => l.worker === '[web]' && l.restart_in_ms !== undefined)
      .map((l) => l.restart_in_ms!);
    expect(delays.length).toBeGreaterThanOrEqual(4);
    delays.forEach((d, i) => i > 0 && expect(d).toBe(delays[i - 1] * 2));
    expect((await webStatus()).status).not.toBe('ERROR');

    const doctor = await runRq(['doctor', '--json'], { root: t.root });
    expect(doctor.code).toBe(1);
    const report = JSON.parse(doctor.out.join('')) as { findings: { subject: string; reason: string; fix: string }[] };
    expect(report.findings).toContainEqual({ severity: 'problem', subject: 'web', reason: inUse, fix: expect.stringContaining(fix) });

    await new Promise((r) => holder.close(r));
    await waitFor(async () => (await runRq(['doctor'], { root: t.root })).code === 0, 'rq doctor to find nothing once the port is free', 60_000);
    const page = await fetch(`http://127.0.0.1:${t.port}/doctor.json`);
    expect(page.status).toBe(200);
    expect(((await page.json()) as { ok: boolean }).ok).toBe(true);
    expect(jsonLines().some((l) => l.msg.startsWith(`[web] serves again at http://127.0.0.1:${t.port}/ (before: ${inUse})`))).toBe(true);
  }, 120_000);

  it('after the fix it gives (rq-install --port N --force), the web serves on the new port by itself and says where', async () => {
    await startRq();
    const other = await freePort();
    const install = spawnSync(process.execPath, [path.join(PROJECT, 'bin', 'rq-install'), '--port', String(other), '--force', '--root', t.root], {
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    // Said as the web read its config.json when it started again, not as rq-mgr read it at its start.
    const again = `[web] serves again at http://127.0.0.1:${other}/ (before: port ${t.port} on 127.0.0.1 is in use by another program)`;
    await waitFor(() => jsonLines().some((l) => l.msg === again), 'the web to serve on the port chosen', 60_000);
    // rq-install --force also linked the built-in queues this root lacked: healthy once they answer.
    await waitFor(async () => (await fetch(`http://127.0.0.1:${other}/healthz`)).status === 200, 'rq healthy on the port chosen', 30_000);
  }, 120_000);
});
