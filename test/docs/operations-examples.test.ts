// The systemd unit, logrotate config and container recipe of docs/operations.md (docs/examples/): checked, run where they can be, and shown unchanged.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { blockAfter, readProjectFile } from '../helpers/doc-blocks.js';
import { PROJECT, type TestRoot, freePort, makeRoot, waitFor } from '../helpers/rq-root.js';

const run = promisify(execFile);
const UNIT = 'docs/examples/systemd/rq.service';
const LOGROTATE = 'docs/examples/logrotate/rq';
const DOCKERFILE = 'docs/examples/container/Dockerfile';
const ENTRYPOINT = 'docs/examples/container/entrypoint.sh';

let roots: TestRoot[] = [];
afterEach(async () => {
  await Promise.all(roots.map((r) => r.cleanup()));
  roots = [];
});
async function root(): Promise<TestRoot> {
  const t = await makeRoot();
  roots.push(t);
  return t;
}

/** `Key=value` lines of a unit file's [Service] section (repeated keys keep every value). */
function serviceKeys(unit: string): Map<string, string[]> {
  const section = unit.split(/^\[Service\]$/m)[1].split(/^\[/m)[0];
  const keys = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) keys.set(m[1], [...(keys.get(m[1]) ?? []), m[2]]);
  }
  return keys;
}

describe('the systemd unit', () => {
  it('runs rq-init as a dedicated user, installs for production, restarts, and is hardened without what breaks Node', async () => {
    const keys = serviceKeys(await readProjectFile(UNIT));
    const one = (k: string) => keys.get(k)?.[0];
    expect(one('User')).toBe('rq');
    expect(one('ExecStart')).toMatch(/\/bin\/rq-init --root \/srv\/rq$/);
    expect(one('ExecStartPre')).toContain('rq-install --root /srv/rq --env production');
    expect(one('Restart')).toBe('on-failure');
    expect(one('KillMode')).toBe('mixed');
    expect(one('StandardOutput')).toBe('journal');
    for (const k of ['NoNewPrivileges', 'PrivateTmp', 'PrivateDevices', 'ProtectKernelTunables', 'RestrictSUIDSGID']) expect(one(k), k).toBe('yes');
    expect(one('ProtectSystem')).toBe('strict');
    expect(one('ReadWritePaths')).toBe('/srv/rq');
    expect(keys.has('MemoryDenyWriteExecute')).toBe(false);
    // Its cgroup is rq's to divide: run cgroups, and limits through cgroup v2.
    expect([one('Delegate'), one('ProtectControlGroups')]).toEqual(['yes', 'no']);
  });

  it('passes systemd-analyze verify (with this checkout for /opt/rq)', async () => {
    const t = await root();
    const unit = (await readProjectFile(UNIT)).replaceAll('/opt/rq', PROJECT).replaceAll('/srv/rq', t.root);
    const file = path.join(t.root, 'rq.service');
    await fs.writeFile(file, unit);
    const { stderr } = await run('systemd-analyze', ['verify', file]);
    // Unknown keys and bad values are warnings on stderr, with exit 0: none may name the unit.
    expect(stderr.split('\n').filter((l) => l.includes('rq.service'))).toEqual([]);
  });
});

describe('the logrotate config', () => {
  it("rotates a running rq-mgr daemon's log with copytruncate, and rq goes on logging into queuemgr.log", async () => {
    const t = await root();
    const bin = (name: string) => path.join(PROJECT, 'bin', name);
    await run(bin('rq-mgr'), ['start', '--root', t.root]);
    try {
      const log = path.join(t.root, 'log', 'queuemgr.log');
      await waitFor(async () => (await fs.readFile(log, 'utf8')).includes('"msg":"rq-mgr started"'), 'rq-mgr to log its start');
      const conf = path.join(t.root, 'logrotate.conf');
      await fs.writeFile(conf, (await readProjectFile(LOGROTATE)).replaceAll('/srv/rq', t.root).replace('su rq rq', 'su root root'));
      await run('logrotate', ['--force', '--state', path.join(t.root, 'logrotate.state'), conf]);
      expect(await fs.readFile(`${log}.1`, 'utf8')).toContain('"msg":"rq-mgr started"');
      const pid = Number(await fs.readFile(path.join(t.root, 'config', 'queuemgr.pid'), 'utf8'));
      process.kill(pid, 'SIGHUP');
      // The daemons' shared descriptor writes at the truncated file's end: no hole of NULs before the new line.
      const after = await waitFor(async () => {
        const text = await fs.readFile(log, 'utf8');
        return text.includes('SIGHUP: reloading') && text;
      }, 'rq-mgr to log into the truncated file');
      expect(after.startsWith('{')).toBe(true);
    } finally {
      await run(bin('rq-mgr'), ['stop', '--root', t.root]);
    }
  });
});

describe('the container recipe', () => {
  it('is a Node 20 image running as a non-root user, with the root as a volume, the port and a /healthz check', async () => {
    const lines = (await readProjectFile(DOCKERFILE))
      .replace(/\\\n/g, ' ')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    const of = (word: string) => lines.filter((l) => l.startsWith(`${word} `)).map((l) => l.slice(word.length + 1).trim());
    expect(of('FROM').every((f) => /^node:20[-.\w]*( AS \w+)?$/.test(f))).toBe(true);
    const lastFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
    const final = lines.slice(lastFrom);
    const user = final.filter((l) => l.startsWith('USER ')).pop();
    expect(user).toBe('USER rq');
    expect(final.some((l) => l.includes('useradd') && l.includes(' rq'))).toBe(true);
    expect(of('VOLUME')).toEqual(['/srv/rq']);
    expect(of('EXPOSE')).toEqual(['3333']);
    expect(of('ENV').join(' ')).toContain('WEB_PORT=3333');
    // Exec forms are JSON arrays; every COPY source from the context exists in the checkout.
    const health = of('HEALTHCHECK')[0];
    expect(JSON.parse(health.slice(health.indexOf('CMD ') + 4)).join(' ')).toContain('/healthz');
    expect(JSON.parse(of('ENTRYPOINT')[0])).toEqual(['/usr/bin/tini', '--', '/usr/local/bin/rq-entrypoint']);
    for (const c of of('COPY').filter((c) => !c.startsWith('--from'))) {
      const src = c.split(/\s+/)[0];
      await expect(fs.stat(path.join(PROJECT, src)), src).resolves.toBeTruthy();
    }
  });

  it('its entrypoint makes an empty volume a production root and runs rq-init, the HEALTHCHECK command passes, and SIGTERM stops it cleanly', async () => {
    const t = await root();
    const volume = path.join(t.root, 'vol');
    await fs.mkdir(volume);
    const port = await freePort();
    const env = { ...process.env, APP_DIR: PROJECT, RQ_ROOT: volume, LISTEN_ADDR: '127.0.0.1', WEB_PORT: String(port) };
    // --watch-stdin (passed on to rq-init): rq stops with this test even if the test dies.
    const child = spawn(path.join(PROJECT, ENTRYPOINT), ['--watch-stdin'], { env, stdio: ['pipe', 'ignore', 'ignore'] });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const dockerfile = (await readProjectFile(DOCKERFILE)).replace(/\\\n/g, ' ');
      const check = JSON.parse(/^HEALTHCHECK .*? CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
      expect(check[0]).toBe('node');
      await waitFor(
        async () => {
          try {
            await run(process.execPath, check.slice(1), { env });
            return true;
          } catch {
            return false;
          }
        },
        'the HEALTHCHECK command to pass',
        30_000,
        200,
      );
      const config = JSON.parse(await fs.readFile(path.join(volume, 'config', 'config.json'), 'utf8'));
      expect(config).toMatchObject({ env: 'production', port, addr: '127.0.0.1' });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

describe('docs/operations.md', () => {
  it.each([UNIT, LOGROTATE, DOCKERFILE, ENTRYPOINT])('shows %s as it is', async (rel) => {
    expect(await blockAfter('docs/operations.md', rel), `${rel}, named and then shown in a code block`).toBe(await readProjectFile(rel));
  });
});
