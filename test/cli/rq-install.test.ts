import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_QUEUES, NEW_QUEUE_WARNING, installBuiltins, main } from '../../src/cli/rq-install.js';
import { parseGlobalConfig } from '../../src/config/global-config.js';

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const run = promisify(execFile);

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-install-'));
});
afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

async function install(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { stdout: (l) => out.push(l), stderr: (l) => err.push(l), env: {} });
  return { code, out, err };
}

const readConfig = () => fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8');

describe('rq-install main', () => {
  it('writes one JSON line in the classic key order and creates the runtime folders', async () => {
    const r = await install('--root', tmp);
    expect(r.code).toBe(0);
    expect(r.err).toEqual([]);
    expect(await readConfig()).toBe(
      `{"env":"development","host":"127.0.0.1","port":3333,"addr":"127.0.0.1","tmpdir":${JSON.stringify(path.join(tmp, 'tmp'))},"allow_new_queue":false}\n`,
    );
    // It may come to hold basic_auth passwords.
    expect((await fs.stat(path.join(tmp, 'config', 'config.json'))).mode & 0o777).toBe(0o600);
    // Not listable by others, whatever the umask (this test's is the usual 022).
    for (const d of ['queues', 'scandir', 'timers', 'config', 'log', 'tmp']) {
      const st = await fs.stat(path.join(tmp, d));
      expect([st.isDirectory(), st.mode & 0o777], d).toEqual([true, 0o750]);
    }
    expect(r.out.at(-1)).toBe(`Installed rq in ${tmp} (config: ${path.join(tmp, 'config', 'config.json')})`);
    expect(parseGlobalConfig(await readConfig(), 'config.json').host).toBe('127.0.0.1');
  });

  it('writes the given options, the port as a number (as the default is)', async () => {
    const r = await install(
      '--root',
      tmp,
      '--env=production',
      '--host',
      'rq.example.com',
      '--port',
      '8080',
      '--addr',
      '0.0.0.0',
      '--tmpdir',
      tmp,
      '--no-allow-new-queue',
    );
    expect(r.code).toBe(0);
    expect(await readConfig()).toBe(
      `{"env":"production","host":"rq.example.com","port":8080,"addr":"0.0.0.0","tmpdir":${JSON.stringify(tmp)},"allow_new_queue":false}\n`,
    );
  });

  it('--allow-new-queue turns queue creation on with a warning; --script-dir is repeatable and needs it', async () => {
    const r = await install('--root', tmp, '--allow-new-queue', '--script-dir', 'scripts', '--script-dir=/srv/rq scripts');
    expect(r.code).toBe(0);
    expect(JSON.parse(await readConfig())).toMatchObject({ allow_new_queue: true, script_dirs: ['scripts', '/srv/rq scripts'] });
    expect(r.out.at(-1)).toBe(NEW_QUEUE_WARNING);
    await fs.rm(path.join(tmp, 'config'), { recursive: true });
    expect(await install('--root', tmp, '--script-dir', 'x')).toEqual({
      code: 2,
      out: [],
      err: ['rq-install: --script-dir: only with --allow-new-queue (script dirs limit the queues the web may create)'],
    });
    expect(await install('--root', tmp, '--allow-new-queue', '--script-dir')).toEqual({
      code: 2,
      out: [],
      err: ['rq-install: --script-dir: expected a directory path, received no value'],
    });
    await expect(fs.stat(path.join(tmp, 'config', 'config.json'))).rejects.toThrow(/ENOENT/);
  });

  it('says Already installed and exits 1 unless --force', async () => {
    expect((await install('--root', tmp)).code).toBe(0);
    const again = await install('--root', tmp, '--port', '4000');
    expect(again).toEqual({
      code: 1,
      out: ['Already installed'],
      err: [
        `rq-install: ${path.join(tmp, 'config', 'config.json')} exists, left as it is: rq-mgr start --root ${tmp} starts it; rq-install --force with options changes them and keeps every other setting`,
      ],
    });
    expect(await readConfig()).toContain('"port":3333');
    const forced = await install('--root', tmp, '--port', '4000', '--force');
    expect(forced.code).toBe(0);
    expect(await readConfig()).toContain('"port":4000');
  });

  it('--force changes only what its options set: basic_auth, env and every other key are kept', async () => {
    expect((await install('--root', tmp, '--env', 'production')).code).toBe(0);
    const file = path.join(tmp, 'config', 'config.json');
    const before = { ...JSON.parse(await readConfig()), basic_auth: { realm: 'rq', users: { admin: 's3cret' } }, relative_root: '/rq/', own_note: 'x' };
    await fs.writeFile(file, JSON.stringify(before));
    const forced = await install('--root', tmp, '--port', '4000', '--force');
    expect(forced).toMatchObject({ code: 0, err: [] });
    expect(forced.out).toContain('Kept from the existing config: env, host, addr, tmpdir, allow_new_queue, basic_auth, relative_root, own_note');
    expect(JSON.parse(await readConfig())).toEqual({ ...before, port: 4000 });
    // allow_new_queue on in the file is enough for --script-dir; with basic_auth there, no warning about it.
    await fs.writeFile(file, JSON.stringify({ ...before, allow_new_queue: true }));
    const dirs = await install('--root', tmp, '--script-dir', 'scripts', '--force');
    expect([dirs.code, dirs.err, dirs.out.includes(NEW_QUEUE_WARNING)]).toEqual([0, [], false]);
    expect(JSON.parse(await readConfig())).toMatchObject({ allow_new_queue: true, script_dirs: ['scripts'], basic_auth: before.basic_auth });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    // A value of the existing file the daemon would refuse is named, and nothing is written.
    await fs.writeFile(file, JSON.stringify({ ...before, port: 'abc' }));
    const bad = await install('--root', tmp, '--env', 'staging', '--force');
    expect(bad.code).toBe(1);
    expect(bad.err.join('\n')).toMatch(/^rq-install: config\/config.json: port: expected a port number 1-65535 .*received "abc"/);
    expect(JSON.parse(await readConfig())).toMatchObject({ port: 'abc', env: 'production' });
  });

  it('--force over a config that is not valid JSON refuses, naming the fault, and writes nothing: its basic_auth would be lost', async () => {
    expect((await install('--root', tmp)).code).toBe(0);
    const file = path.join(tmp, 'config', 'config.json');
    const broken = '{"basic_auth": {"users": {"admin": "s3cret"}}, "port": 3333,}';
    await fs.writeFile(file, broken);
    const forced = await install('--root', tmp, '--port', '4001', '--force');
    expect(forced.code).toBe(1);
    expect(forced.err).toEqual([expect.stringMatching(/^rq-install: config\/config.json: not valid JSON: /)]);
    expect(await fs.readFile(file, 'utf8')).toBe(broken);
    expect(await fs.readdir(path.join(tmp, 'config'))).toEqual(['config.json']);
    // JSON, but no object: refused the same way.
    await fs.writeFile(file, '[1]');
    expect(await install('--root', tmp, '--force')).toMatchObject({ code: 1, err: ['rq-install: config/config.json: expected a JSON object, received [1]'] });
    // A link to a file that is gone holds nothing to keep: the defaults replace it.
    await fs.rm(file);
    await fs.symlink(path.join(tmp, 'gone.json'), file);
    expect(await install('--root', tmp, '--env', 'staging', '--force')).toMatchObject({ code: 0, err: [] });
    expect(JSON.parse(await readConfig())).toMatchObject({ env: 'staging', port: 3333 });
  });

  it('refuses bad options with one line on stderr and exit 2', async () => {
    const cases: [string[], string][] = [
      [['--port', 'abc'], 'rq-install: --port: expected a port number 1-65535, received "abc"'],
      [['--port', '0'], 'rq-install: --port: expected a port number 1-65535, received "0"'],
      [['--port', '65536'], 'rq-install: --port: expected a port number 1-65535, received "65536"'],
      [['--port'], 'rq-install: --port: expected a port number 1-65535, received no value'],
      [
        ['--port', '10080'],
        "rq-install: --port: expected a port browsers will open, received 10080, one they refuse (the Fetch standard's bad ports): choose another",
      ],
      [
        ['--port', '6000'],
        "rq-install: --port: expected a port browsers will open, received 6000, one they refuse (the Fetch standard's bad ports): choose another",
      ],
      [['--host', 'a b'], 'rq-install: --host: expected a host name, received "a b"'],
      // Written, it would have stopped the web at the next restart.
      [
        ['--addr', '999.1.1.1'],
        'rq-install: --addr: expected a listen address: an IP address such as 127.0.0.1, 0.0.0.0 or ::, or a host name, received "999.1.1.1"',
      ],
      [['--tmpdir', 'rel/dir'], 'rq-install: --tmpdir: expected an absolute directory path, received "rel/dir"'],
      [['--force=maybe'], 'rq-install: --force: expected no value (or true/false), received "maybe"'],
      [['--prot', '1'], 'rq-install: unknown option --prot; did you mean --port?'],
      [['--fleet-hst', 'a'], 'rq-install: unknown option --fleet-hst; did you mean --fleet-host?'],
      [['--zzzzzz', '1'], 'rq-install: unknown option --zzzzzz'],
      [['extra'], 'rq-install: unexpected argument "extra" (options are --name value)'],
    ];
    for (const [args, text] of cases) {
      const r = await install('--root', tmp, ...args);
      expect(r, args.join(' ')).toEqual({ code: 2, out: [], err: [text] });
    }
    await expect(fs.stat(path.join(tmp, 'config', 'config.json'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a --tmpdir that does not exist', async () => {
    const r = await install('--root', tmp, '--tmpdir', path.join(tmp, 'nope'));
    expect(r).toEqual({ code: 2, out: [], err: [`rq-install: --tmpdir: expected an existing directory, received ${JSON.stringify(path.join(tmp, 'nope'))}`] });
  });

  it('prints usage for --help', async () => {
    const r = await install('--help');
    expect(r.code).toBe(0);
    const lines = r.out.join('\n').split('\n');
    expect(lines[0]).toMatch(/^rq-install: make a directory an rq root/);
    expect(lines).toContainEqual(expect.stringMatching(/^Usage: rq-install /));
    for (const o of ['root', 'env', 'host', 'port', 'addr', 'tmpdir', 'allow-new-queue', 'script-dir', 'force'])
      expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^ {2}--${o}\\b.* {2}\\S`)));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}\$ rq-install --root /));
  });
});

describe('installBuiltins', () => {
  let scripts: string;
  beforeEach(async () => {
    scripts = path.join(tmp, 'pkg', 'scripts');
    for (const q of ['cleaner', 'relay']) await fs.mkdir(path.join(scripts, q), { recursive: true });
    await fs.writeFile(path.join(scripts, 'cleaner', 'timer.json'), '{"period":86400,"msg":{"dest":"cleaner","param1":"ALLQUEUES"}}');
    await fs.writeFile(path.join(scripts, 'webhook'), 'not a directory');
    for (const d of ['scandir', 'timers']) await fs.mkdir(path.join(tmp, d));
  });

  it('links the existing queue dirs in order, then the cleaner timer (absolute links)', async () => {
    const out: string[] = [];
    await installBuiltins({ root: tmp, scriptsDir: scripts, relative: false }, (l) => out.push(l));
    expect(out).toEqual(['Installed queue relay', 'Installed queue cleaner', 'Installed timer cleaner']);
    expect(await fs.readlink(path.join(tmp, 'scandir', 'relay'))).toBe(path.join(scripts, 'relay'));
    expect(await fs.readlink(path.join(tmp, 'scandir', 'cleaner'))).toBe(path.join(scripts, 'cleaner'));
    expect(await fs.readlink(path.join(tmp, 'timers', 'cleaner.json'))).toBe(path.join(scripts, 'cleaner', 'timer.json'));
    expect((await fs.readdir(path.join(tmp, 'scandir'))).sort()).toEqual(['cleaner', 'relay']);
    expect(BUILTIN_QUEUES).toEqual(['relay', 'debug', 'cleaner', 'rq_router', 'webhook']);
  });

  it('makes relative links when asked and skips what already exists', async () => {
    await fs.symlink('/somewhere/else', path.join(tmp, 'scandir', 'relay'));
    await fs.writeFile(path.join(tmp, 'timers', 'cleaner.json'), '{}');
    const out: string[] = [];
    await installBuiltins({ root: tmp, scriptsDir: scripts, relative: true }, (l) => out.push(l));
    expect(out).toEqual(['Installed queue cleaner']);
    expect(await fs.readlink(path.join(tmp, 'scandir', 'relay'))).toBe('/somewhere/else');
    expect(await fs.readlink(path.join(tmp, 'scandir', 'cleaner'))).toBe('../pkg/scripts/cleaner');
    expect((await fs.stat(path.join(tmp, 'scandir', 'cleaner'))).isDirectory()).toBe(true);
    const again: string[] = [];
    await installBuiltins({ root: tmp, scriptsDir: scripts, relative: true }, (l) => again.push(l));
    expect(again).toEqual([]);
  });
});

describe('bin/rq-install', () => {
  beforeAll(async () => {
    // test/global-setup.ts builds dist/; build here too when this file runs on its own without it.
    const built = await fs.stat(path.join(PROJECT, 'dist', 'cli', 'rq-install.js')).then(
      () => true,
      () => false,
    );
    if (!built)
      await run(process.execPath, [path.join(PROJECT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: PROJECT }).catch(
        () => undefined,
      );
  }, 120_000);

  it('installs through the real launcher and exits with its codes', async () => {
    const bin = path.join(PROJECT, 'bin', 'rq-install');
    const first = await run(bin, ['--root', tmp, '--port', '3390']);
    expect(first.stdout).toMatch(/Installed rq in /);
    expect(await readConfig()).toContain('"port":3390');
    const second = await run(bin, ['--root', tmp]).catch((e: { code: number; stdout: string }) => e);
    expect(second).toMatchObject({ code: 1, stdout: 'Already installed\n' });
    const bad = await run(bin, ['--root', tmp, '--force', '--port', 'abc']).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2, stderr: 'rq-install: --port: expected a port number 1-65535, received "abc"\n' });
  });
});
