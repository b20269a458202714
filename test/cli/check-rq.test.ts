// check_rq against a real rq-mgr with its web process: OK, WARNING, CRITICAL and fetch failures.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { type WebRoot, send, startWebRoot, stateOf } from '../web/web-root.js';
import { judge, parseStatusText, parseThresholds } from '../../src/cli/check-rq.js';

let w: WebRoot;
const probe = async (...args: string[]) => {
  try {
    const r = await run(BIN('check_rq'), ['-s', '127.0.0.1', '-p', String(w.port), ...args]);
    return { code: 0, out: r.stdout.trim() };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: e.stdout.trim() };
  }
};

beforeAll(async () => {
  w = await startWebRoot({ queues: { alpha: {}, beta: {} } });
});
afterAll(async () => {
  await w?.stop();
});

describe('check_rq', () => {
  it('OK when every queue is UP and quiet', async () => {
    expect(await probe()).toEqual({ code: 0, out: 'OK: all queue tests normal' });
  });

  it('WARNING past the first thresholds, CRITICAL past the second, on errors and when not UP', async () => {
    const done = await send(w.base, 'alpha', { param1: 'done' });
    await expect.poll(() => stateOf(w.base, 'alpha', done), { timeout: 10_000 }).toBe('done');
    expect(await probe('-t', '25:40:1:5')).toEqual({ code: 1, out: 'WARNING:  alpha: done => 1' });
    expect(await probe('--thresh=25:40:1:1')).toEqual({ code: 2, out: 'CRITICAL:  alpha: done => 1' });

    // Future messages wait in que while the queue is UP (a paused queue is CRITICAL by itself).
    for (let i = 0; i < 3; i++) await send(w.base, 'beta', { param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(await probe('-t', '2:40:3000:3500')).toEqual({ code: 1, out: 'WARNING:  beta: prep=>0 run=>0 que=>3' });
    expect(await probe('-t', '1:3:3000:3500')).toEqual({ code: 2, out: 'CRITICAL:  beta: prep=>0 run=>0 que=>3' });

    const err = await send(w.base, 'alpha', { param1: 'err' });
    await expect.poll(() => stateOf(w.base, 'alpha', err), { timeout: 10_000 }).toBe('err');
    expect(await probe()).toEqual({ code: 2, out: 'CRITICAL:  alpha: errors => 1' });

    await fs.writeFile(path.join(w.root, 'config', 'beta.pause'), '');
    expect((await probe()).out).toContain('beta: status PAUSE');
    await fs.writeFile(path.join(w.root, 'config', 'beta.down'), '');
    const down = await probe();
    expect(down.code).toBe(2);
    expect(down.out).toContain('beta: status DOWN');
  });

  it('--dump prints every queue and its values', async () => {
    const r = await probe('--dump');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^alpha\n {2}status: UP\n/m);
    // A reader gone before the first line (head -0): no stack trace, the dump's own status.
    const gone = await run('bash', ['-o', 'pipefail', '-c', `"$0" -s 127.0.0.1 -p ${w.port} --dump | head -0`, BIN('check_rq')]);
    expect(gone.stderr).toBe('');
  });

  it('fetch problems are CRITICAL; bad options UNKNOWN', async () => {
    const closed = await freePort();
    const r = await run(BIN('check_rq'), ['-s', '127.0.0.1', '-p', String(closed)]).catch((e) => e);
    expect(r.code).toBe(2);
    expect(r.stdout.trim()).toBe(`CRITICAL: Could not connect to 127.0.0.1:${closed}`);
    const bad = await run(BIN('check_rq'), ['-t', '1:2']).catch((e) => e);
    expect(bad.code).toBe(3);
    expect(bad.stdout).toContain('--thresh: expected four whole numbers');
  });

  it('an unknown option or a stray word is UNKNOWN (3) by name, and no host is probed in its place', async () => {
    // -H is Nagios's usual host option: ignored, the probe went to localhost and said CRITICAL about the wrong host.
    expect(await probe('-H', 'foo.invalid')).toEqual({
      code: 3,
      out: 'UNKNOWN: unknown option -H (the host is -s HOST or --server HOST); check_rq -h lists the options',
    });
    expect(await probe('--x')).toEqual({ code: 3, out: 'UNKNOWN: unknown option --x; check_rq -h lists the options' });
    expect(await probe('extra')).toEqual({
      code: 3,
      out: 'UNKNOWN: unexpected argument "extra": check_rq takes no words besides its options (check_rq -h lists them)',
    });
  });

  it('a misused option is UNKNOWN (3) naming it and what its value is, as the installed check_rq prints it', async () => {
    const line = (...args: string[]) =>
      run(BIN('check_rq'), args).then(
        (r) => [0, r.stdout.trim()],
        (e: { code: number; stdout: string }) => [e.code, e.stdout.trim()],
      );
    const cases: [string[], string][] = [
      [['-s'], '-s: expected HOST, received nothing'],
      [['-p'], '-p: expected PORT, received nothing'],
      [['-t'], '-t: expected a:b:c:d, received nothing'],
      // A password may start with -: the next option is not named, it may be the password.
      [['-u', '-x'], '-u: expected NAME:PASSWORD, received a word starting with -'],
      [['-d', '-d'], '-d/--dump: expected once, received it twice'],
      [['-h', '-h'], '-h/--help: expected once, received it twice'],
      [['-P', '3333'], 'unknown option -P (the port is -p PORT); check_rq -h lists the options'],
      [['-undefined', 'f'], 'unknown option -undefined; check_rq -h lists the options'],
    ];
    const lines = await Promise.all(cases.map(([args]) => line(...args)));
    expect(lines).toEqual(cases.map(([, text]) => [3, `UNKNOWN: ${text}`]));
  });
});

describe('check_rq against a web with basic_auth', () => {
  let a: WebRoot;
  beforeAll(async () => {
    a = await startWebRoot({ config: { basic_auth: { realm: 'rq-check', users: { nagios: 's3cret' } } }, queues: { alpha: {} } });
  });
  afterAll(async () => {
    await a?.stop();
  });
  const check = (...args: string[]) =>
    run(BIN('check_rq'), ['-s', '127.0.0.1', '-p', String(a.port), ...args]).then(
      (r) => ({ code: 0, out: r.stdout.trim() }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout.trim() }),
    );

  it('--user-file reads NAME:PASSWORD from a file only its owner may read; -u still works; the password is never printed', async () => {
    expect(await check()).toEqual({ code: 2, out: 'CRITICAL: Could not Fetch /q.txt: HTTP 401 Unauthorized' });
    expect(await check('-u', 'nagios:wrong')).toEqual({ code: 2, out: 'CRITICAL: Could not Fetch /q.txt: HTTP 401 Unauthorized' });
    expect(await check('-u', 'nagios:s3cret')).toEqual({ code: 0, out: 'OK: all queue tests normal' });
    const file = path.join(a.root, 'check-user');
    await fs.writeFile(file, 'nagios:s3cret\n', { mode: 0o600 });
    expect(await check('--user-file', file)).toEqual({ code: 0, out: 'OK: all queue tests normal' });
    await fs.chmod(file, 0o640);
    expect(await check('--user-file', file)).toEqual({ code: 3, out: `UNKNOWN: --user-file: others may read or write ${file} (mode 640); chmod 600 ${file}` });
    await fs.chmod(file, 0o620);
    expect((await check('--user-file', file)).out).toBe(`UNKNOWN: --user-file: others may read or write ${file} (mode 620); chmod 600 ${file}`);
    await fs.chmod(file, 0o600);
    expect(await check('-u', 'nagios:wrong', '--user-file', file)).toEqual({ code: 3, out: 'UNKNOWN: -u and --user-file: give one of them' });
    expect(await check('--user-file')).toEqual({ code: 3, out: 'UNKNOWN: --user-file: expected FILE (NAME:PASSWORD on its first line), received nothing' });
    await fs.writeFile(file, 's3cret\n', { mode: 0o600 });
    await fs.chmod(file, 0o600);
    const noName = await check('--user-file', file);
    expect(noName).toEqual({
      code: 3,
      out: `UNKNOWN: --user-file: expected NAME:PASSWORD on the first line of ${file}, received a line without a name and ':'`,
    });
    expect(noName.out).not.toContain('s3cret');
    expect(await check('--user-file', path.join(a.root, 'missing'))).toEqual({
      code: 3,
      out: `UNKNOWN: --user-file: cannot read ${path.join(a.root, 'missing')}: ENOENT`,
    });
  });
});

describe('check_rq --user-file lines as editors write them', () => {
  let a: WebRoot;
  beforeAll(async () => {
    a = await startWebRoot({ config: { basic_auth: { realm: 'rq-check', users: { nagios: 's3cret' } } }, queues: { alpha: {} } });
  });
  afterAll(async () => {
    await a?.stop();
  });
  const check = (file: string) =>
    run(BIN('check_rq'), ['-s', '127.0.0.1', '-p', String(a.port), '--user-file', file]).then(
      (r) => ({ code: 0, out: r.stdout.trim() }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout.trim() }),
    );

  it('a line ending in CRLF or blanks (a file saved on Windows, an editor) still authenticates: the ending is no part of the password', async () => {
    const file = path.join(a.root, 'check-user');
    for (const text of ['nagios:s3cret\r\n', 'nagios:s3cret  \nnext line\n']) {
      await fs.writeFile(file, text, { mode: 0o600 });
      expect(await check(file), JSON.stringify(text)).toEqual({ code: 0, out: 'OK: all queue tests normal' });
    }
  });

  it('a line with no name before its first colon is UNKNOWN (the file is wrong), even when the password holds a colon', async () => {
    const file = path.join(a.root, 'check-user');
    await fs.writeFile(file, ':pass:word\n', { mode: 0o600 });
    expect(await check(file)).toEqual({
      code: 3,
      out: `UNKNOWN: --user-file: expected NAME:PASSWORD on the first line of ${file}, received a line without a name and ':'`,
    });
  });
});

describe('check_rq rules (pure)', () => {
  const t = parseThresholds('25:40:3000:3500')!;
  it('parses status pages and judges them', () => {
    const s = parseStatusText('\nstatus: UP\n\nuptime: 6\n\n\nprep: 0\nque: 30\nrun: 1\n\ndone: 0\nerr: 0\nrelayed: 3600\n\n');
    expect(s).toMatchObject({ status: 'UP', que: '30', relayed: '3600' });
    expect(judge('q', s, t)).toEqual({ critical: ['q: relayed => 3600'], warning: ['q: prep=>0 run=>1 que=>30'] });
    expect(judge('q', parseStatusText('\nstatus: DOWN\n\n'), t)).toEqual({ critical: ['q: status DOWN'], warning: [] });
  });

  it('thresholds are four decimal whole numbers, each warning at most its critical', () => {
    expect(parseThresholds('1:1:0:0')).toEqual({ warnActive: 1, critActive: 1, warnDone: 0, critDone: 0 });
    for (const bad of ['5:2:1:1', '1:2:4:3', '0x1:2:3:4', '1:2:3:', '1.5:2:3:4', ' 1:2:3:4', '1:2:3:4:5']) expect(parseThresholds(bad), bad).toBeNull();
  });
});
