// rq-install --fleet --etcd --advertise [--fleet-host]: config.json's `fleet` block, and each flag's refusal naming it, what it expects and what it got.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/rq-install.js';
import { parseGlobalConfig } from '../../src/config/global-config.js';

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-install-fleet-'));
});
afterEach(() => fs.rm(tmp, { recursive: true, force: true }));

async function install(...argv: string[]): Promise<{ code: number; err: string[] }> {
  const err: string[] = [];
  const code = await main(['--root', tmp, ...argv], { stdout: () => undefined, stderr: (l) => err.push(l), env: {} });
  return { code, err };
}

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

  it('keeps a --host given beside --advertise', async () => {
    const r = await install('--host', 'rq-a.example', '--fleet', 'p', '--etcd', 'http://e:2379', '--advertise', 'http://10.0.0.5:3333/');
    expect(r.code).toBe(0);
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8')).host).toBe('rq-a.example');
  });

  it('writes no fleet without --fleet', async () => {
    expect((await install()).code).toBe(0);
    expect(JSON.parse(await fs.readFile(path.join(tmp, 'config', 'config.json'), 'utf8'))).not.toHaveProperty('fleet');
  });

  it.each([
    [['--etcd', 'http://a:2379'], '--etcd: only with --fleet NAME'],
    [
      ['--fleet', 'a b', '--etcd', 'http://a:2379', '--advertise', 'http://h/'],
      '--fleet: expected a fleet name of letters, digits, ".", "_" or "-", received "a b"',
    ],
    [['--fleet', 'p', '--advertise', 'http://h/'], '--etcd: expected etcd client URLs, comma-separated (http or https), received nothing'],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379,unix:///run/etcd.sock', '--advertise', 'http://h/'],
      '--etcd: expected http:// or https:// URLs such as http://127.0.0.1:2379, received "unix:///run/etcd.sock"',
    ],
    [
      ['--fleet', 'p', '--etcd', 'http://a:2379'],
      "--advertise: expected the http:// or https:// base URL other hosts reach this host's web at, received nothing",
    ],
    [['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'ftp://h/'], 'received "ftp://h/"'],
    [['--fleet', 'p', '--etcd', 'http://a:2379', '--advertise', 'http://h/', '--fleet-host', 'a/b'], '--fleet-host: expected a host name'],
  ])('refuses %j with exit 2', async (argv, text) => {
    const r = await install(...argv);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toContain(text);
  });
});
