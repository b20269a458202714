// rq-mgr end to end: install, control socket, supervision, scandir, shutdown with running scripts.
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VERBS_SH, freePort, pidAlive, waitFor } from '../helpers/rq-root.js';
import { BIN, MgrProc, install, run } from '../helpers/mgr-proc.js';
import { queuePaths } from '../../src/config/paths.js';
import { BUILTIN_QUEUES } from '../../src/cli/rq-install.js';
import { budget } from '../helpers/time-budget.js';

/** The supervisor's queues minus the built-ins that rq-install links into scandir/. */
const own = (names: string[]) => names.filter((n) => !(BUILTIN_QUEUES as readonly string[]).includes(n));

let root: string;
let mgr: MgrProc | undefined;

/** A fresh root made by rq-install (built-in queues linked into scandir/), no rq-mgr running yet. */
async function installedRoot(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-mgr-'));
  await install(dir, await freePort());
  return dir;
}

/** Gives each test of the enclosing suite a root of its own; the test starts rq-mgr when it needs one. */
function rootPerTest(): void {
  beforeEach(async () => {
    root = await installedRoot();
  });
  afterEach(async () => {
    await mgr?.stop();
    mgr = undefined;
    await fs.rm(root, { recursive: true, force: true });
  });
}

/**
 * Gives the tests of the enclosing suite one root with rq-mgr running, for tests that only add queues
 * and scandir links of names of their own and read only what those did: none sees another's.
 */
function sharedMgr(): { mgr: MgrProc } {
  const ctx = {} as { mgr: MgrProc; root: string };
  beforeAll(async () => {
    ctx.root = await installedRoot();
    ctx.mgr = await MgrProc.start(ctx.root);
  });
  beforeEach(() => {
    root = ctx.root;
  });
  afterAll(async () => {
    await ctx.mgr?.stop();
    if (ctx.root) await fs.rm(ctx.root, { recursive: true, force: true });
  });
  return ctx;
}

/** The `queue started` line of queue process `pid` in rq-mgr's log, once its log writer has written it. */
async function startLine(pid: number): Promise<{ node_flags: string[] }> {
  const line = await waitFor(
    async () =>
      (await fs.readFile(path.join(root, 'log', 'mgr-test.log'), 'utf8')).split('\n').find((l) => l.includes('"queue started"') && l.includes(`"pid":${pid}`)),
    `queue ${pid}'s start line in the log`,
  );
  return JSON.parse(line) as { node_flags: string[] };
}

/** A queue directory like an operator writes: an executable run (verbs.sh) and an optional config. */
async function scriptDir(name: string, config?: unknown): Promise<string> {
  const dir = path.join(root, 'apps', name);
  await fs.mkdir(dir, { recursive: true });
  await fs.copyFile(VERBS_SH, path.join(dir, 'run'));
  await fs.chmod(path.join(dir, 'run'), 0o755);
  if (config !== undefined) await fs.writeFile(path.join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

describe('control socket (spec §6.2)', () => {
  rootPerTest();

  it('answers every command with the classic replies', async () => {
    mgr = await MgrProc.start(root);
    expect(await mgr.cmd('ping')).toEqual(['pong']);
    expect(await mgr.cmd('version')).toEqual(['3.0.0']);
    expect(await mgr.cmd('environment')).toEqual(['test']);
    expect(Number.isInteger((await mgr.cmd('uptime'))[0])).toBe(true);
    expect(own(await mgr.cmd('queues'))).toEqual([]);

    const cfg = { name: 'made', script: VERBS_SH, num_workers: '2', exec_prefix: '', coalesce_params: [], blocking_params: [] };
    expect(await mgr.cmd('create_queue', JSON.stringify(cfg))).toEqual(['success', 'queue created - awesome']);
    expect(await mgr.cmd('create_queue', JSON.stringify(cfg))).toEqual(['fail', 'already created']);
    expect(await mgr.cmd('create_queue', JSON.stringify({ ...cfg, name: 'bad name' }))).toEqual(['fail', 'queue name has invalid characters']);
    expect((await mgr.cmd('create_queue', '{nope'))[0]).toBe('fail');
    expect(own(await mgr.cmd('queues'))).toEqual(['made']);
    await mgr.waitQueueUp('made');
    const written = JSON.parse(await fs.readFile(queuePaths(root, 'made').configFile, 'utf8'));
    expect(written).toEqual({ name: 'made', script: VERBS_SH, num_workers: 2, exec_prefix: '', env_vars: {}, coalesce_params: [], blocking_params: [] });

    expect(await mgr.cmd('pause_queue', 'made')).toEqual(['ok', 'made']);
    expect(await mgr.q('made', 'status')).toEqual(['PAUSE']);
    expect(await mgr.cmd('down_queue', 'made')).toEqual(['ok', 'made']);
    expect(await mgr.q('made', 'status')).toEqual(['DOWN']);
    expect(await mgr.cmd('up_queue', 'made')).toEqual(['ok', 'made']);
    expect(await mgr.cmd('resume_queue', 'made')).toEqual(['ok', 'made']);
    expect(await mgr.q('made', 'status')).toEqual(['UP']);
    expect(await mgr.cmd('up_queue', 'nosuch')).toEqual(['fail', 'invalid queue name']);
    expect(await mgr.cmd('up_queue', '../etc')).toEqual(['fail', 'invalid queue name']);
    // An admin file rq-mgr cannot write or remove (a directory in its place) is the classic failure.
    const pauseFile = path.join(root, 'config', 'made.pause');
    await fs.mkdir(path.join(pauseFile, 'x'), { recursive: true });
    expect(await mgr.cmd('pause_queue', 'made')).toEqual(['fail', 'not allowed to up']);
    expect(await mgr.cmd('resume_queue', 'made')).toEqual(['fail', 'not allowed to up']);
    await fs.rm(pauseFile, { recursive: true });
    expect(await mgr.cmd('restart_queue', 'nosuch')).toEqual(['fail', 'invalid queue name']);
    expect((await mgr.cmd('frobnicate'))[0]).toBe('error');
    expect(await mgr.cmd('ping')).toEqual(['pong']);

    const link = path.join(root, 'linked.json');
    await fs.writeFile(link, JSON.stringify({ name: 'fromfile', script: VERBS_SH, num_workers: 1, exec_prefix: '' }));
    expect(await mgr.cmd('create_queue_link', link)).toEqual(['success', 'queue created - awesome']);
    expect((await fs.lstat(queuePaths(root, 'fromfile').configFile)).isSymbolicLink()).toBe(true);
    await fs.writeFile(path.join(root, 'bad.json'), JSON.stringify({ name: 'x', script: VERBS_SH }));
    expect(await mgr.cmd('create_queue_link', path.join(root, 'bad.json'))).toEqual(['fail', 'json config is missing num_workers field']);
    // A file whose name is no queue name: refused before anything is made, as create_queue refuses it.
    for (const name of ['bad name', '../escape']) {
      await fs.writeFile(path.join(root, 'badname.json'), JSON.stringify({ name, script: VERBS_SH, num_workers: 1, exec_prefix: '' }));
      expect(await mgr.cmd('create_queue_link', path.join(root, 'badname.json')), name).toEqual(['fail', 'queue name has invalid characters']);
    }
    expect(own(await mgr.cmd('queues')).sort()).toEqual(['fromfile', 'made']);

    expect(await mgr.cmd('delete_queue', 'made')).toEqual(['ok', 'started deleting queue']);
    expect(await mgr.cmd('delete_queue', 'made')).toEqual(['fail', 'no such queue']);
    await waitFor(() => !existsSync(queuePaths(root, 'made').dir), 'made to move to the trash');
    expect((await fs.readdir(path.join(root, 'queues', '.trash')))[0]).toMatch(/^made\.\d{8}\.\d{4}\.\d{2}\.\d{3}$/);
  });
});

describe('supervision', () => {
  rootPerTest();

  it('restarts a killed queue process; stop leaves no script alive', async () => {
    mgr = await MgrProc.start(root);
    await mgr.cmd('create_queue', JSON.stringify({ name: 'sup', script: VERBS_SH, num_workers: 2, exec_prefix: '' }));
    const pid1 = await mgr.waitQueueUp('sup');
    process.kill(pid1, 'SIGKILL');
    const pid2 = await waitFor(async () => {
      const p = await mgr!.waitQueueUp('sup').catch(() => 0);
      return p && p !== pid1 ? p : false;
    }, 'a new queue process');
    expect(pid2).not.toBe(pid1);

    const ids: string[] = [];
    for (let i = 0; i < 2; i++) ids.push((await mgr.q('sup', 'create_message', { dest: 'sup', param1: 'forever' }))[1].split('/').pop());
    const pidFile = (id: string) => path.join(queuePaths(root, 'sup').state.run, id, 'pid');
    await waitFor(() => ids.every((id) => existsSync(pidFile(id))), 'two running scripts');
    const pids = await Promise.all(ids.map(async (id) => Number(await fs.readFile(pidFile(id), 'utf8'))));
    await mgr.stop();
    for (const p of pids) expect(pidAlive(p)).toBe(false);
    expect(existsSync(path.join(root, 'config', 'queuemgr.pid'))).toBe(false);
    expect(existsSync(path.join(root, 'config', 'queuemgr.sock'))).toBe(false);
    // Their messages were interrupted, not lost: the next start puts them back in que.
    await fs.writeFile(path.join(root, 'config', 'sup.pause'), '');
    mgr = await MgrProc.start(root);
    await mgr.waitQueueUp('sup');
    expect(await mgr.q('sup', 'num_messages')).toMatchObject({ run: 0, que: 2 });
  });

  it('queue_memory "lean" starts queue processes without the optimizing compiler, and they still run messages (node-flags.ts)', async () => {
    const cfgFile = path.join(root, 'config', 'config.json');
    await fs.writeFile(cfgFile, JSON.stringify({ ...JSON.parse(await fs.readFile(cfgFile, 'utf8')), queue_memory: 'lean' }));
    mgr = await MgrProc.start(root);
    await mgr.cmd('create_queue', JSON.stringify({ name: 'lean', script: VERBS_SH, num_workers: 1, exec_prefix: '' }));
    const pid = await mgr.waitQueueUp('lean');
    const id = (await mgr.q('lean', 'create_message', { dest: 'lean', param1: 'done' }))[1].split('/').pop();
    expect(await mgr.q('lean', 'wait_message', { msg_id: id, timeout: 15 })).toMatchObject(['ok', { state: 'done' }]);
    expect((await startLine(pid)).node_flags).toEqual(['--max-semi-space-size=1', '--heap-growing-percent=20', '--max-opt=2']);
  });

  it('start (daemon), status, stop through bin/rq-mgr', async () => {
    const started = await run(BIN('rq-mgr'), ['start', '--root', root]);
    expect(started.stdout).toMatch(/^queuemgr: process with pid \d+ started\.$/m);
    const st = await run(BIN('rq-mgr'), ['status', '--root', root]);
    expect(st.stdout).toMatch(/queuemgr: running \[pid \d+\]/);
    await expect(run(BIN('rq-mgr'), ['start', '--root', root])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('already running') });
    const stopped = await run(BIN('rq-mgr'), ['stop', '--root', root]);
    expect(stopped.stdout).toMatch(/queuemgr: stopped/);
    await expect(run(BIN('rq-mgr'), ['status', '--root', root])).rejects.toMatchObject({ code: 3 });
    // A stale pid file (dead pid) does not block a start.
    await fs.writeFile(path.join(root, 'config', 'queuemgr.pid'), '999999\n');
    const zap = await run(BIN('rq-mgr'), ['zap', '--root', root]);
    expect(zap.stdout).toContain('zapped');
  });
});

describe('scandir', () => {
  rootPerTest();

  it('a symlink creates the queue, a config change is read again by its process (a run goes on), removing the link trashes it with its messages', async () => {
    mgr = await MgrProc.start(root);
    await mgr.cmd('create_queue', JSON.stringify({ name: 'manual', script: VERBS_SH, num_workers: 1, exec_prefix: '' }));
    const dir = await scriptDir('app', { num_workers: 2, env_vars: { FOO: 'bar' } });
    const t0 = Date.now();
    await fs.symlink(dir, path.join(root, 'scandir', 'app'));
    await mgr.waitQueueUp('app', budget(3000));
    // The budget is a second on a quiet machine (386 ms measured from a fresh clone); the suite runs
    // beside other suites on two cores, so the test allows three.
    expect(Date.now() - t0).toBeLessThan(budget(3000));
    const cfg = (await mgr.q('app', 'config'))[1];
    expect(cfg).toMatchObject({ name: 'app', num_workers: 2, exec_prefix: '', env_vars: { FOO: 'bar' }, script: await fs.realpath(path.join(dir, 'run')) });
    expect(await fs.readlink(queuePaths(root, 'app').formFile)).toBe(path.join(dir, 'form.json'));

    const id = (await mgr.q('app', 'create_message', { dest: 'app', param1: 'done' }))[1].split('/').pop();
    await waitFor(async () => (await mgr!.q('app', 'get_message_state', { msg_id: id }))[1] === 'done', 'message done');

    // A config change is read again by the queue process: a run under way goes on.
    const pid1 = await mgr.waitQueueUp('app');
    const pidFile = path.join(root, 'forever.pid');
    const running = (await mgr.q('app', 'create_message', { dest: 'app', param1: 'forever', param2: pidFile }))[1].split('/').pop();
    const script = await waitFor(async () => Number((await fs.readFile(pidFile, 'utf8').catch(() => '')).trim()) || null, 'the script to start');
    await fs.writeFile(path.join(dir, 'config.json'), JSON.stringify({ num_workers: 3 }));
    await waitFor(async () => (await mgr!.q('app', 'config').catch(() => [null, {}]))[1].num_workers === 3, 'config change applied', 5000);
    const pid2 = await mgr.waitQueueUp('app');
    expect(pid2).toBe(pid1);
    expect((await mgr.q('app', 'get_message_state', { msg_id: running }))[1]).toBe('run');
    expect(() => process.kill(script, 0)).not.toThrow();
    expect((await mgr.q('app', 'destroy_message', { msg_id: running }))[0]).toBe('ok');
    await waitFor(async () => (await mgr!.q('app', 'get_message_state', { msg_id: running }))[1] !== 'run', 'the destroyed run to end');

    // The refusal is logged by the scandir pass that read the broken file, which then moves on:
    // once the line is there, that pass has decided, and the queue must be the same process.
    await fs.writeFile(path.join(dir, 'config.json'), '{ broken');
    const mgrLog = path.join(root, 'log', 'mgr-test.log');
    await waitFor(async () => /bad config\.json in scandir link/.test(await fs.readFile(mgrLog, 'utf8')), 'the broken config to be refused', 5000);
    expect((await mgr.q('app', 'config'))[1].num_workers).toBe(3);
    expect(await mgr.waitQueueUp('app')).toBe(pid2);

    // Its link keeps it: delete_queue would leave a queue scandir makes again, empty. The link's removal deletes it.
    expect(await mgr.cmd('delete_queue', 'app')).toEqual([
      'fail',
      'queue app comes from scandir/app: remove that link to delete it (its messages go to queues/.trash/)',
    ]);
    expect(await mgr.q('app', 'ping')).toEqual(['pong']);
    expect(await mgr.cmd('pause_queue', 'app')).toEqual(['ok', 'app']);
    expect(await mgr.cmd('down_queue', 'app')).toEqual(['ok', 'app']);
    await fs.rm(path.join(root, 'scandir', 'app'));
    await waitFor(() => !existsSync(queuePaths(root, 'app').dir), 'app to be disabled', 5000);
    // Its pause and down went with it: a queue made again under the name starts UP.
    expect([existsSync(queuePaths(root, 'app').pauseFile), existsSync(queuePaths(root, 'app').downFile)]).toEqual([false, false]);
    const trash = await fs.readdir(path.join(root, 'queues', '.trash'));
    expect(trash).toEqual([expect.stringMatching(/^app\./)]);
    const kept = await fs.readdir(path.join(root, 'queues', '.trash', trash[0], 'done'), { recursive: true });
    expect(kept.some((p) => p.endsWith(id))).toBe(true);
    // The queue made through create_queue is never touched by scandir.
    expect(await mgr.q('manual', 'ping')).toEqual(['pong']);
    expect(own(await mgr.cmd('queues'))).toEqual(['manual']);
  });
});

describe('queues and scandir links added to one running rq-mgr', () => {
  const shared = sharedMgr();

  // Its V8 flags cannot be seen in /proc (the process title replaces its command line): its start line says them.
  it('starts a queue process with malloc trimming in its environment, and its scripts without (node-flags.ts)', async () => {
    const { mgr } = shared;
    await mgr.cmd('create_queue', JSON.stringify({ name: 'lean', script: VERBS_SH, num_workers: 1, exec_prefix: '' }));
    const pid = await mgr.waitQueueUp('lean');
    const env = (await fs.readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
    expect(env).toContain('MALLOC_TRIM_THRESHOLD_=131072');
    // The `env` verb prints its script's environment: the queue's own setting is not the scripts'.
    const id = (await mgr.q('lean', 'create_message', { dest: 'lean', param1: 'env' }))[1].split('/').pop();
    const [, done] = await mgr.q('lean', 'wait_message', { msg_id: id, timeout: 15 });
    expect(done).toMatchObject({ state: 'done' });
    const printed = await fs.readFile(path.join(root, done.path, 'job', 'stdio.log'), 'utf8');
    expect(printed).toMatch(/^RQ_PARAM1=env$/m);
    expect(printed).not.toContain('MALLOC_TRIM_THRESHOLD_');
    // The flags it was started with are in its first log line (the default queue_memory: no --max-opt).
    expect((await startLine(pid)).node_flags).toEqual(['--max-semi-space-size=1', '--heap-growing-percent=20']);
  });

  it('a link whose run is not executable is not a queue; making it executable creates it', async () => {
    const { mgr } = shared;
    const dir = await scriptDir('later');
    await fs.chmod(path.join(dir, 'run'), 0o644);
    await fs.symlink(dir, path.join(root, 'scandir', 'later'));
    // A marker linked after it: every scandir pass reads the whole directory, so the pass that
    // creates the marker has also judged `later`, with its run already not executable.
    await fs.symlink(await scriptDir('marker'), path.join(root, 'scandir', 'marker'));
    // Generous bounds: how fast scandir reacts is the scandir suite's first test's subject; this one is about what it decides.
    await mgr.waitQueueUp('marker', budget(15_000));
    expect(existsSync(queuePaths(root, 'later').dir)).toBe(false);
    await fs.chmod(path.join(dir, 'run'), 0o755);
    await mgr.waitQueueUp('later', budget(15_000));
  });
});
