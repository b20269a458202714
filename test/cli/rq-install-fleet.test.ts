// rq-install --fleet --etcd --advertise [--fleet-host] [--etcd-ca --etcd-cert --etcd-key --etcd-user --etcd-password-file]: config.json's `fleet` block,
// and each flag's refusal naming it, what it expects and what it got; under --force, the fields given change the block, its others kept.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/rq-install.js';
import { parseGlobalConfig } from '../../src/config/global-config.js';
import { defaultHostName } from '../../src/config/fleet-config.js';
import { type TestCerts, makeTestCerts } from '../helpers/tls-certs.js';

let tmp: string;
/** Files rq-install reads as rq-mgr would: a CA, a client certificate and its key, a password. */
let certs: TestCerts;
let password: string;
beforeAll(async () => {
  certs = makeTestCerts();
  password = path.join(certs.dir, 'etcd-password');
  await fs.writeFile(password, 'secret\n');
});
afterAll(() => certs?.cleanup());
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-install-fleet-'));
});
afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

/** Its exit code and stderr lines; `said`, its stdout lines. */
const said: string[] = [];
async function install(...argv: string[]): Promise<{ code: number; err: string[] }> {
  const err: string[] = [];
  said.length = 0;
  const code = await main(['--root', tmp, ...argv], { stdout: (l) => said.push(l), stderr: (l) => err.push(l), env: {} });
  return { code, err };
}

const HTTPS = ['--fleet', 'p', '--etcd', 'https://a:2379', '--advertise', 'http://h/'];

describe('rq-install fleet flags', () => {
  it('writes the fleet block, etcd URLs split on commas, which rq-mgr loads as it is', async () => {
    const r = await install(
      '--fleet',
      'prod',
      '--etcd',
      'http://10.0.0.1:2379, https://10.0.0.2:2379',
      '--advertise',
      'http://10.0.0.5:3333/',
      '--fleet-host',
      'rq-a',
    );
    expect(r).toEqual({ code: 0, err: [] });
    const text = await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8');
    expect(parseGlobalConfig(text, 'config.json').fleet).toEqual({
      name: 'prod',
      etcd: ['http://10.0.0.1:2379', 'https://10.0.0.2:2379'],
      advertise: 'http://10.0.0.5:3333/',
      host: 'rq-a',
    });
    // Full ids (`host` and port) name the host by its advertised name, as other hosts reach it.
    expect(JSON.parse(text).host).toBe('10.0.0.5');
  });

  it("writes etcd's TLS files and user as paths, which rq-mgr loads as they are", async () => {
    const tls = ['--etcd-ca', certs.ca, '--etcd-cert', certs.clientCert, '--etcd-key', certs.clientKey];
    const user = ['--etcd-user', 'rq', '--etcd-password-file', password];
    const r = await install('--fleet', 'prod', '--etcd', 'https://10.0.0.1:2379', '--advertise', 'http://10.0.0.5:3333/', ...tls, ...user);
    expect(r).toEqual({ code: 0, err: [] });
    expect(parseGlobalConfig(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'), 'config.json').fleet).toEqual({
      name: 'prod',
      etcd: ['https://10.0.0.1:2379'],
      advertise: 'http://10.0.0.5:3333/',
      etcd_ca: certs.ca,
      etcd_cert: certs.clientCert,
      etcd_key: certs.clientKey,
      etcd_user: 'rq',
      etcd_password_file: password,
    });
  });

  it('refuses etcd files rq-mgr could not read at its start, naming the field and the file, and writes nothing', async () => {
    const empty = path.join(certs.dir, 'empty-password');
    await fs.writeFile(empty, '');
    for (const [argv, text] of [
      [['--etcd-ca', '/nonexistent.pem'], 'fleet.etcd_ca: "/nonexistent.pem" cannot be read: no such file'],
      [['--etcd-ca', password], `fleet.etcd_ca: ${JSON.stringify(password)} holds no PEM CA certificate`],
      [['--etcd-user', 'rq', '--etcd-password-file', '/nonexist'], 'fleet.etcd_password_file: "/nonexist" cannot be read: no such file'],
      [['--etcd-user', 'rq', '--etcd-password-file', empty], `fleet.etcd_password_file: ${JSON.stringify(empty)} is empty: it holds no password`],
    ]) {
      const r = await install(...HTTPS, ...argv);
      expect(r.code).toBe(1);
      expect(r.err).toEqual([expect.stringContaining(`rq-install: config/config.json: ${text}`)]);
      await expect(fs.access(path.join(tmp, 'config', 'config.json'))).rejects.toThrow(/ENOENT/);
    }
  });

  it('keeps a --host given beside --advertise', async () => {
    const r = await install('--host', 'rq-a.example', '--fleet', 'p', '--etcd', 'http://e:2379', '--advertise', 'http://10.0.0.5:3333/');
    expect(r.code).toBe(0);
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8')).host).toBe('rq-a.example');
  });

  it.each([
    ['the port and address --advertise names', ['--advertise', 'http://127.0.0.2:23340/'], { port: 23340, addr: '127.0.0.2' }],
    ['its port 80, named', ['--advertise', 'http://127.0.0.2:80/'], { port: 80, addr: '127.0.0.2' }],
    ['its IPv6 address', ['--advertise', 'http://[::1]:23340/'], { port: 23340, addr: '::1' }],
    [
      '--port and --addr over them (a proxy or NAT in between)',
      ['--advertise', 'http://10.0.0.5:23340/', '--port', '23341', '--addr', '0.0.0.0'],
      { port: 23341, addr: '0.0.0.0' },
    ],
    ['the defaults without a port, and for a name', ['--advertise', 'https://localhost/'], { port: 3333, addr: '127.0.0.1' }],
  ])('listens on %s', async (_, argv, listen) => {
    const r = await install('--fleet', 'p', '--etcd', 'http://e:2379', ...argv);
    expect(r).toEqual({ code: 0, err: [] });
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'))).toMatchObject(listen);
  });

  it('says when the others are told a name while the web listens on loopback only, and installs', async () => {
    const r = await install('--fleet', 'p', '--etcd', 'http://e:2379', '--advertise', 'http://rq-a.example:3333/');
    expect(r).toEqual({
      code: 0,
      err: [
        'rq-install: the web listens on 127.0.0.1 only ("addr"), but the other hosts are told http://rq-a.example:3333/ ("advertise"): ' +
          'give --addr an address of this host they reach (or 0.0.0.0), unless a proxy here forwards to it',
      ],
    });
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'))).toMatchObject({ port: 3333, addr: '127.0.0.1' });
  });

  it("renames the host with --force --fleet-host alone (rq doctor's fix for a name taken), keeping the rest of the fleet block", async () => {
    const at = ['--advertise', 'http://127.0.0.1:23350/'];
    expect((await install('--fleet', 'p', '--etcd', 'https://a:2379', ...at, '--fleet-host', 'vm', '--etcd-ca', certs.ca)).code).toBe(0);
    const file = path.join(tmp, 'config', 'config.json');
    const before = JSON.parse(await fs.readFile(file, 'utf8'));
    await fs.writeFile(file, JSON.stringify({ ...before, fleet: { ...before.fleet, lease_ttl_s: 30 } }));
    expect(await install('--force', '--fleet-host', 'rq-b')).toEqual({ code: 0, err: [] });
    // What it kept, the block's fields among it.
    expect(said).toContain(
      'Kept from the existing config: env, host, port, addr, tmpdir, allow_new_queue, fleet.name, fleet.etcd, fleet.advertise, fleet.etcd_ca, fleet.lease_ttl_s',
    );
    const block = { name: 'p', etcd: ['https://a:2379'], advertise: 'http://127.0.0.1:23350/', host: 'rq-b', etcd_ca: certs.ca, lease_ttl_s: 30 };
    expect(parseGlobalConfig(await fs.readFile(file, 'utf8'), 'config.json').fleet).toEqual(block);
    // A whole block given again changes what it names and keeps what it does not (the TLS file, the lease).
    expect(await install('--force', '--fleet', 'q', '--etcd', 'https://b:2379', ...at)).toEqual({ code: 0, err: [] });
    expect(JSON.parse(await fs.readFile(file, 'utf8')).fleet).toEqual({ ...block, name: 'q', etcd: ['https://b:2379'] });
  });

  it('refuses under --force an --advertise whose port browsers refuse, as for a whole block, and changes nothing', async () => {
    expect((await install('--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://127.0.0.1:23350/')).code).toBe(0);
    const file = path.join(tmp, 'config', 'config.json');
    const before = await fs.readFile(file, 'utf8');
    const r = await install('--force', '--advertise', 'http://127.0.0.1:6000/');
    expect(r.code).toBe(2);
    expect(r.err).toEqual([expect.stringMatching(/^rq-install: --advertise: expected a port browsers will open .*received 6000/)]);
    expect(await fs.readFile(file, 'utf8')).toBe(before);
  });

  it('refuses --force --fleet-host over a config.json without a fleet, saying what is missing', async () => {
    expect((await install()).code).toBe(0);
    const r = await install('--force', '--fleet-host', 'rq-b');
    expect(r).toEqual({
      code: 2,
      err: ['rq-install: --fleet-host: only with --fleet NAME (the fleet to join), or with --force over a config.json that has a fleet'],
    });
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'))).not.toHaveProperty('fleet');
  });

  it("names the host it joins as when left to the machine's host name, which rq roots sharing the machine would all take", async () => {
    const said = async (...argv: string[]) => {
      const out: string[] = [];
      expect(await main(['--root', tmp, '--force', ...argv], { stdout: (l) => out.push(l), stderr: () => undefined, env: {} })).toBe(0);
      return out.filter((l) => l.startsWith('Fleet '));
    };
    const fleet = ['--fleet', 'p', '--etcd', 'http://e:2379', '--advertise', 'http://127.0.0.1:23351/'];
    expect(await said(...fleet)).toEqual([
      `Fleet p: this host joins as ${defaultHostName()}, the machine's host name; each rq root of this machine in the fleet needs a name of its own (--fleet-host NAME)`,
    ]);
    expect(await said(...fleet, '--fleet-host', 'rq-a')).toEqual([]);
  });

  it('writes no fleet without --fleet', async () => {
    expect((await install()).code).toBe(0);
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'))).not.toHaveProperty('fleet');
  });

  it.each([
    [['--etcd', 'http://a:2379'], '--etcd: only with --fleet NAME'],
    [
      ['--fleet', 'a b', '--etcd', 'http://a:2379', '--advertise', 'http://h/'],
      '--fleet: expected a fleet name: a name of 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit; received "a b"',
    ],
    [['--fleet', 'p', '--advertise', 'http://h/'], '--etcd: expected etcd client URLs, comma-separated (http or https), received nothing'],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379,unix:///run/etcd.sock', '--advertise', 'http://h/'],
      '--etcd: expected http:// or https:// URLs such as http://127.0.0.1:2379 (no user, query or fragment), received "unix:///run/etcd.sock"',
    ],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379'],
      "--advertise: expected the http:// or https:// base URL other hosts reach this host's web at (no user, query or fragment), received nothing",
    ],
    [['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'ftp://h/'], 'received "ftp://h/"'],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h/', '--fleet-host', '_x'],
      '--fleet-host: expected a host name: a name of 1-63 letters',
    ],
    [['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h/', '--fleet-host', 'h'.repeat(64)], 'starting with a letter or digit; received "hhh'],
    [['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h:6000/'], '--advertise: expected a port browsers will open'],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h:0/'],
      '--advertise: expected a port 1-65535 (the web listens on it without --port), received 0',
    ],
    [['--etcd-ca', '/ca.pem'], '--etcd-ca: only with --fleet NAME'],
    [['--etcd-user', 'rq', '--etcd-password-file', '/pw'], '--etcd-user: only with --fleet NAME'],
    [[...HTTPS, '--etcd-ca', 'ca.pem'], '--etcd-ca: expected an absolute path of a PEM CA bundle that signed etcd\'s server certificate, received "ca.pem"'],
    [[...HTTPS, '--etcd-ca'], "--etcd-ca: expected an absolute path of a PEM CA bundle that signed etcd's server certificate, received no value"],
    [
      [...HTTPS, '--etcd-cert', '/c.pem'],
      "--etcd-key: expected an absolute path of the client certificate's private key (PEM) beside --etcd-cert, received nothing",
    ],
    [[...HTTPS, '--etcd-key', '/k.pem'], '--etcd-cert: expected an absolute path of a PEM client certificate beside --etcd-key, received nothing'],
    [
      [...HTTPS, '--etcd-cert', '/c.pem', '--etcd-key', 'k.pem'],
      '--etcd-key: expected an absolute path of the client certificate\'s private key (PEM), received "k.pem"',
    ],
    [
      [...HTTPS, '--etcd-user', 'rq'],
      "--etcd-password-file: expected an absolute path of a file holding the etcd user's password beside --etcd-user, received nothing",
    ],
    [[...HTTPS, '--etcd-password-file', '/pw'], '--etcd-user: expected an etcd user name beside --etcd-password-file, received nothing'],
    [[...HTTPS, '--etcd-user', '', '--etcd-password-file', '/pw'], '--etcd-user: expected an etcd user name, received ""'],
    [
      [...HTTPS, '--etcd-user', 'rq', '--etcd-password-file', 'pw'],
      '--etcd-password-file: expected an absolute path of a file holding the etcd user\'s password, received "pw"',
    ],
    [
      ['--fleet', 'p', '--etcd', 'https://a:2379,http://b:2379', '--advertise', 'http://h/', '--etcd-ca', '/ca.pem'],
      '--etcd-ca: only with https:// etcd URLs (--etcd has "http://b:2379")',
    ],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h/', '--etcd-cert', '/c.pem', '--etcd-key', '/k.pem'],
      '--etcd-cert: only with https:// etcd URLs (--etcd has "http://a:2379")',
    ],
  ])('refuses %j with exit 2', async (argv, text) => {
    const r = await install(...argv);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toContain(text);
  });
});
