// One test per security finding (docs/security.md): each attack or bad request is refused, and nothing is written.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { SCRIPT_DIRS_MARKER } from '../../src/config/script-dirs.js';
import { mgrCommand } from '../../src/ipc/rq1.js';
import { MgrProc, install } from '../helpers/mgr-proc.js';
import { VERBS_SH, freePort, waitFor } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, startWebRoot, treeSnapshot, waitState } from '../web/web-root.js';
import { messageIds, rawRequest } from './fuzz-helpers.js';

const mode = async (p: string) => (await fs.stat(p)).mode & 0o777;

describe('a default root, as rq-install makes it', () => {
  let root: string;
  let port: number;
  let mgr: MgrProc;
  const marker = path.join(os.tmpdir(), `rq-pwned-${process.pid}`);
  beforeAll(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-default-'));
    port = await freePort();
    await install(root, port);
    mgr = await MgrProc.start(root);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200, 'web up');
  }, 60_000);
  afterAll(async () => {
    await mgr?.stop();
    await fs.rm(root, { recursive: true, force: true });
  });

  it('config.json is private and leaves queue creation off', async () => {
    expect(await mode(rootPaths(root).configFile)).toBe(0o600);
    expect(JSON.parse(await fs.readFile(rootPaths(root).configFile, 'utf8')).allow_new_queue).toBe(false);
  });

  it("POST /new_queue with a script and an exec_prefix of the caller's choice runs nothing (finding 1)", async () => {
    const before = await fs.readdir(path.join(root, 'queues'));
    const res = await postForm(`http://127.0.0.1:${port}/new_queue`, {
      'queue[name]': 'pwn',
      'queue[script]': '/bin/sh',
      'queue[exec_prefix]': `touch ${marker}; true`,
      'queue[num_workers]': '1',
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe('Queue creation not allowed at this time.');
    const link = await postForm(`http://127.0.0.1:${port}/new_queue_link`, { 'queue[json_path]': 'config/config.json' });
    expect(link.status).toBe(403);
    expect(await fs.readdir(path.join(root, 'queues'))).toEqual(before);
    expect((await mgr.cmd('queues')).includes('pwn')).toBe(false);
    await expect(fs.access(marker)).rejects.toThrow(/ENOENT/);
  });

  it('a request naming a foreign Host (DNS rebinding) is refused before any route runs (finding 2)', async () => {
    const before = await messageIds(root, 'debug');
    const host = `evil.example:${port}`;
    const get = await rawRequest(port, 'GET', '/q.json', { host }, undefined);
    expect(get.status).toBe(421);
    // A .json URL is a JSON client: the refusal comes as ["fail", text].
    expect(JSON.parse(get.body)).toEqual([
      'fail',
      `Host: expected a name of this server (host, addr, localhost or allowed_hosts in config/config.json), received "${host}"`,
    ]);
    // Under rebinding the page's Origin matches the Host it sends: the Origin check alone let this through.
    const body = `mesg=${encodeURIComponent('{"dest":"debug"}')}`;
    const post = await rawRequest(
      port,
      'POST',
      '/q/debug/new_message',
      { host, origin: `http://${host}`, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length) },
      body,
    );
    expect(post.status).toBe(421);
    expect(await messageIds(root, 'debug')).toEqual(before);
    // The names the server has are served: loopback by name and address, with any port.
    for (const ok of [`127.0.0.1:${port}`, `127.0.0.2:${port}`, `localhost:${port}`, 'localhost', `[::1]:${port}`])
      expect((await rawRequest(port, 'GET', '/q.json', { host: ok }, undefined)).status, ok).toBe(200);
  });

  // On this root's rq-mgr rather than one of its own: the test only asks it and compares its queues
  // before and after. Its argument names a queue the root has (the built-in debug), which a command
  // read by its prefix (delete_queue_now as delete_queue) would take away.
  describe('exact command names (finding 4)', () => {
    it('the supervisor answers a command with a suffix as unknown and changes nothing', async () => {
      const queues = await mgr.cmd('queues');
      expect(queues).toContain('debug');
      for (const word of ['queuesX', 'delete_queue_now', 'PING', 'ping\u0000']) {
        expect(await mgrCommand(rootPaths(root).mgrSock, word, 'debug'), word).toEqual(['error', `unknown command: ${word}`]);
      }
      expect(await mgr.cmd('queues')).toEqual(queues);
    });
  });
});

describe('queue creation over HTTP, allowed, inside script_dirs', () => {
  let w: WebRoot;
  let defs: string;
  beforeAll(async () => {
    w = await startWebRoot({
      // queues/ is listed by mistake: uploads land there, so it is never a script dir.
      config: { allow_new_queue: true, script_dirs: ['defs', 'queues'], basic_auth: undefined },
      setup: async (root) => {
        defs = path.join(root, 'defs');
        await fs.mkdir(defs);
        await fs.copyFile(VERBS_SH, path.join(defs, 'run.sh'));
        await fs.chmod(path.join(defs, 'run.sh'), 0o755);
        await fs.symlink('/bin/sh', path.join(defs, 'sh-link'));
        await fs.writeFile(path.join(defs, 'outside.json'), JSON.stringify({ name: 'outside', script: '/bin/sh', num_workers: 1 }));
        await fs.writeFile(
          path.join(defs, 'prefixed.json'),
          JSON.stringify({ name: 'prefixed', script: 'defs/run.sh', exec_prefix: 'bash -c', num_workers: 1 }),
        );
        return {};
      },
    });
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  it('rq-mgr warns at start that queue creation is on without basic_auth', async () => {
    const lines = (await fs.readFile(path.join(w.root, 'log', 'mgr-test.log'), 'utf8')).split('\n').filter((l) => l.includes('allow_new_queue is true'));
    expect(lines.map((l) => JSON.parse(l).level)).toEqual([40]);
  });

  const newQueue = (fields: Record<string, string>) => postForm(`${w.base}/new_queue`, { 'queue[name]': 'made', 'queue[num_workers]': '1', ...fields });

  it('refuses scripts outside script_dirs, through .. or a symlink, and any exec_prefix; creates nothing (finding 1)', async () => {
    const before = await treeSnapshot(path.join(w.root, 'queues'));
    const refusals: [Record<string, string>, string][] = [
      [{ 'queue[script]': '/bin/true' }, 'queue[script]: expected a file inside script_dirs (defs, queues), received "/bin/true"'],
      [
        { 'queue[script]': 'defs/../config/config.json' },
        'queue[script]: expected a file inside script_dirs (defs, queues), received "defs/../config/config.json"',
      ],
      [{ 'queue[script]': 'defs/sh-link' }, 'queue[script]: expected a file inside script_dirs (defs, queues), received "defs/sh-link"'],
      [{ 'queue[script]': 'queues/test/config.json' }, 'queue[script]: expected a file inside script_dirs (defs, queues), received "queues/test/config.json"'],
      // Empty: the root itself, a directory.
      [{ 'queue[script]': '' }, 'queue[script]: expected a file inside script_dirs (defs, queues), received ""'],
      [
        { 'queue[script]': 'defs/run.sh', 'queue[exec_prefix]': 'bash -c' },
        'queue[exec_prefix]: expected no exec_prefix over HTTP unless config/config.json sets allow_exec_prefix, received "bash -c"',
      ],
      // BASH_ENV names a file the default `bash -lc` runs first: code, like a prefix.
      [
        { 'queue[script]': 'defs/run.sh', 'queue[env_vars][BASH_ENV]': '/tmp/evil.sh' },
        'queue[env_vars]: expected no env_vars over HTTP unless config/config.json sets allow_exec_prefix (BASH_ENV, LD_PRELOAD and PATH run code), received {"BASH_ENV":"/tmp/evil.sh"}',
      ],
    ];
    for (const [fields, text] of refusals) {
      const res = await newQueue(fields);
      expect(res.status, JSON.stringify(fields)).toBe(403);
      expect(await res.text()).toBe(`403 - ${text}`);
    }
    expect(await treeSnapshot(path.join(w.root, 'queues'))).toEqual(before);
    // The New Queue form fills in the default prefix: that is no choice of the caller's.
    const made = await newQueue({ 'queue[script]': 'defs/run.sh', 'queue[exec_prefix]': 'bash -lc ' });
    expect(made.status).toBe(303);
    await waitFor(async () => (await fetch(`${w.base}/q/made.json`)).status === 200, 'made queue up');
    // The queue keeps its script as given and is held to script_dirs at every start (test/web/new-queue-script.test.ts swaps a link).
    expect(JSON.parse(await fs.readFile(queuePaths(w.root, 'made').configFile, 'utf8')).script).toBe('defs/run.sh');
    await fs.access(path.join(queuePaths(w.root, 'made').dir, SCRIPT_DIRS_MARKER));
  });

  it('new_queue_link reads only JSON inside script_dirs, and only with a script there (finding 3)', async () => {
    const before = await treeSnapshot(path.join(w.root, 'queues'));
    for (const given of ['config/config.json', '../../etc/passwd', path.join(w.root, 'config', 'config.json'), 'defs/../config/config.json']) {
      const res = await postForm(`${w.base}/new_queue_link`, { 'queue[json_path]': given });
      expect(res.status, given).toBe(403);
      expect(await res.text()).toBe(`403 - queue[json_path]: expected a file inside script_dirs (defs, queues), received ${JSON.stringify(given)}`);
    }
    const outside = await postForm(`${w.base}/new_queue_link`, { 'queue[json_path]': 'defs/outside.json' });
    expect(outside.status).toBe(403);
    expect(await outside.text()).toBe('403 - script of defs/outside.json: expected a file inside script_dirs (defs, queues), received "/bin/sh"');
    const prefixed = await postForm(`${w.base}/new_queue_link`, { 'queue[json_path]': 'defs/prefixed.json' });
    expect(prefixed.status).toBe(403);
    expect(await treeSnapshot(path.join(w.root, 'queues'))).toEqual(before);
  });
});

describe('secrets and file modes (finding 3)', () => {
  let w: WebRoot;
  beforeAll(async () => {
    w = await startWebRoot({ config: { basic_auth: { realm: 'rq', users: { admin: 'hunter2' } } } });
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });
  const auth = { authorization: `Basic ${Buffer.from('admin:hunter2').toString('base64')}` };

  it('a queue config that names basic_auth is served without it', async () => {
    const file = queuePaths(w.root, 'test').configFile;
    const config = JSON.parse(await fs.readFile(file, 'utf8'));
    await fs.writeFile(file, JSON.stringify({ ...config, basic_auth: { users: { admin: 'hunter2' } } }));
    const res = await fetch(`${w.base}/q/test/config.json`, { headers: auth });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toEqual(config);
    await fs.writeFile(file, JSON.stringify(config));
  });

  it('messages, their logs and the sockets are not world-readable', async () => {
    const id = await send(w.base, 'test', { param1: 'done' }, { headers: auth });
    await waitState(w.base, 'test', id, ['done'], { headers: auth });
    const msg = JSON.parse(await (await fetch(`${w.base}/q/test/${id}.json`, { headers: auth })).text()) as { path: string };
    const dir = path.join(w.root, msg.path);
    expect(await mode(path.join(dir, 'msg'))).toBe(0o640);
    expect(await mode(path.join(dir, 'job', 'stdio.log'))).toBe(0o640);
    expect((await mode(dir)) & 0o007).toBe(0);
    expect(await mode(queuePaths(w.root, 'test').sock)).toBe(0o600);
    expect(await mode(rootPaths(w.root).mgrSock)).toBe(0o600);
  });
});
