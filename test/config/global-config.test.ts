import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { hostInfo, loadGlobalConfig, parseGlobalConfig, webUrl } from '../../src/config/global-config.js';

const LABEL = 'config/config.json';
const parse = (obj: unknown) => parseGlobalConfig(JSON.stringify(obj), LABEL);
const problem = (text: string): RqError => {
  try {
    parseGlobalConfig(text, LABEL);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_CONFIG');
    return err as RqError;
  }
  throw new Error('expected a config error');
};

describe('global config.json', () => {
  it('accepts what rq-install writes, with the port as string or number', () => {
    const a = parse({ env: 'development', host: 'h.example', port: '3333', addr: '0.0.0.0', tmpdir: '/tmp', allow_new_queue: true });
    expect(a.port).toBe('3333');
    expect(parse({ host: 'h', port: 3333 }).port).toBe(3333);
  });

  it('keeps unknown keys so the file round-trips', () => {
    const cfg = parse({ host: 'h', port: 1, something_new: { a: 1 }, basic_auth: { realm: 'r', users: { bob: 'pw' }, extra: true } });
    expect(cfg.something_new).toEqual({ a: 1 });
    expect(JSON.parse(JSON.stringify(cfg))).toEqual({
      host: 'h',
      port: 1,
      something_new: { a: 1 },
      basic_auth: { realm: 'r', users: { bob: 'pw' }, extra: true },
    });
  });

  it('refuses a key that is a typo of a setting (which would be lost without a word), and ignores one far from every setting', () => {
    const users = { users: { bob: 'pw' } };
    expect(problem(JSON.stringify({ host: 'h', port: 1, basic_auht: users })).message).toBe(
      'config/config.json: basic_auht: unknown setting; did you mean "basic_auth"?',
    );
    expect(problem('{"host":"h","prot":1}').message).toBe('config/config.json: prot: unknown setting; did you mean "port"?');
    expect(problem(JSON.stringify({ host: 'h', port: 1, ...users })).message).toBe(
      'config/config.json: users: not a setting at this level; did you mean {"basic_auth": {"users": ...}}?',
    );
    const fleet = { name: 'f', etcd: ['http://127.0.0.1:2379'], advertise: 'http://127.0.0.1:3333/', lease_ttl: 5 };
    expect(problem(JSON.stringify({ host: 'h', port: 1, fleet })).message).toBe(
      'config/config.json: fleet.lease_ttl: unknown setting; did you mean "lease_ttl_s"?',
    );
    expect(parse({ host: 'h', port: 1, notes: 'mine', basic_auth: users }).basic_auth).toEqual(users);
    expect(parse({ host: 'h', hosts: ['a', 'b'], port: 1, ports: [2, 3] }).host).toBe('h');
    // At most 1,000 unknown keys are looked at: a file of half a million costs no more.
    const own = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`operator_note_${i}`, i]));
    expect(problem(JSON.stringify({ host: 'h', port: 1, ...own(999), basic_auht: users })).message).toMatch(/basic_auht: unknown setting/);
    expect(parse({ host: 'h', port: 1, ...own(1000), basic_auht: users }).host).toBe('h');
  });

  it('names file, field, expected and received for a bad port', () => {
    expect(problem('{"host":"h","port":"abc"}').message).toBe(
      'config/config.json: port: expected a port number 1-65535 (number or numeric string), received "abc"',
    );
    expect(problem('{"host":"h","port":70000}').message).toBe(
      'config/config.json: port: expected a port number 1-65535 (number or numeric string), received 70000',
    );
  });

  it('reports every missing required field in one message', () => {
    expect(problem('{}').message).toBe(
      'config/config.json: host: expected a host name (non-empty string), received nothing; port: expected a port number 1-65535 (number or numeric string), received nothing',
    );
  });

  it('checks the optional fields', () => {
    expect(problem('{"host":"h","port":1,"relative_root":"rq"}').message).toBe(
      'config/config.json: relative_root: expected a URL path starting with "/", received "rq"',
    );
    expect(problem('{"host":"h","port":1,"allow_new_queue":"yes"}').message).toBe(
      'config/config.json: allow_new_queue: expected true or false, received "yes"',
    );
    expect(problem('{"host":"h","port":1,"allowed_ips":["10.",7]}').message).toBe(
      'config/config.json: allowed_ips[1]: expected an IP address or prefix (string), received 7',
    );
    expect(problem('{"host":"h","port":1,"basic_auth":{"users":{"bob":1}}}').message).toBe(
      'config/config.json: basic_auth.users.bob: expected a password (string), received a value not shown (a secret)',
    );
    expect(problem('{"host":"h","port":1,"max_upload_bytes":-5}').message).toBe(
      'config/config.json: max_upload_bytes: expected a positive whole number of bytes, received -5',
    );
    expect(problem('{"host":"h","port":1,"queue_reply_timeout_s":0}').message).toBe(
      'config/config.json: queue_reply_timeout_s: expected a positive whole number, received 0',
    );
    expect(problem('{"host":"h","port":1,"queue_memory":"small"}').message).toBe(
      'config/config.json: queue_memory: expected "default" or "lean", received "small"',
    );
  });

  it('takes an http(s) otlp_endpoint or false, and names the field for anything else', () => {
    expect(parse({ host: 'h', port: 1, otlp_endpoint: 'http://127.0.0.1:4318' }).otlp_endpoint).toBe('http://127.0.0.1:4318');
    expect(parse({ host: 'h', port: 1, otlp_endpoint: 'https://collector.example/otlp' }).otlp_endpoint).toBe('https://collector.example/otlp');
    expect(parse({ host: 'h', port: 1, otlp_endpoint: false }).otlp_endpoint).toBe(false);
    for (const bad of ['"127.0.0.1:4318"', '"grpc://h:4317"', 'true', '""'])
      expect(problem(`{"host":"h","port":1,"otlp_endpoint":${bad}}`).message).toBe(
        `config/config.json: otlp_endpoint: expected the http(s) URL of an OTLP/HTTP receiver, such as "http://127.0.0.1:4318", or false, received ${bad}`,
      );
  });

  it('takes an IP address or a host name as addr, and refuses what only looks like an IPv4 address', () => {
    for (const addr of ['127.0.0.1', '0.0.0.0', '::', '::1', 'fe80::1', 'localhost', 'rq-host.example.com'])
      expect(parse({ host: 'h', port: 1, addr }).addr).toBe(addr);
    for (const addr of ['999.1.1.1', '10.0.0', '1.2.3.4.5', '', 'two words', 'host_name', '-lead.example', 7])
      expect(problem(JSON.stringify({ host: 'h', port: 1, addr })).message, String(addr)).toBe(
        `config/config.json: addr: expected a listen address: an IP address such as 127.0.0.1, 0.0.0.0 or ::, or a host name, received ${JSON.stringify(addr)}`,
      );
  });

  it('checks the connection limits and healthy_states', () => {
    expect(problem('{"host":"h","port":1,"max_connections":0}').message).toBe(
      'config/config.json: max_connections: expected a positive whole number, received 0',
    );
    expect(problem('{"host":"h","port":1,"max_connections_per_address":1.5}').message).toBe(
      'config/config.json: max_connections_per_address: expected a positive whole number, received 1.5',
    );
    expect(problem('{"host":"h","port":1,"headers_timeout_s":"10"}').message).toBe(
      'config/config.json: headers_timeout_s: expected a positive whole number, received "10"',
    );
    expect(problem('{"host":"h","port":1,"healthy_states":"UP"}').message).toBe(
      'config/config.json: healthy_states: expected an array of queue statuses such as ["UP", "PAUSE"], received "UP"',
    );
    expect(problem('{"host":"h","port":1,"healthy_states":["UP",""]}').message).toBe(
      'config/config.json: healthy_states[1]: expected a queue status such as "UP" (non-empty string), received ""',
    );
    // Any status a queue may report is accepted, one not known today included.
    expect(
      parse({
        host: 'h',
        port: 1,
        healthy_states: ['UP', 'DISK FULL'],
        max_sse_streams: 10,
        max_tails_per_message: 2,
        keep_alive_timeout_s: 5,
        shutdown_grace_s: 3,
        max_socket_connections: 9,
      }).healthy_states,
    ).toEqual(['UP', 'DISK FULL']);
  });

  it('refuses a file that is not a JSON object or not JSON', () => {
    expect(problem('[1]').message).toBe('config/config.json: expected a JSON object, received [1]');
    expect(problem('{"host":').message).toMatch(/^config\/config\.json: not valid JSON: /);
  });

  it('derives the host info for full ids', () => {
    expect(hostInfo(parse({ host: 'h', port: '3333' }))).toEqual({ host: 'h', port: '3333', root: '/' });
    expect(hostInfo(parse({ host: 'h', port: 1, relative_root: '/therq//' }))).toEqual({ host: 'h', port: 1, root: '/therq/' });
  });

  it('webUrl: where a person opens the web UI, loopback unless addr, an IPv6 address in brackets, relative_root kept', () => {
    expect(webUrl({ port: 3333 })).toBe('http://127.0.0.1:3333/');
    expect(webUrl({ addr: '0.0.0.0', port: '8080', relative_root: '/rq' })).toBe('http://0.0.0.0:8080/rq');
    expect(webUrl({ addr: '::1', port: 3333 })).toBe('http://[::1]:3333/');
    expect(new URL(webUrl({ addr: 'fe80::1', port: 1 })).port).toBe('1');
  });

  describe('loadGlobalConfig', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-global-config-'));
    });
    afterAll(() => fs.rm(dir, { recursive: true, force: true }));

    it('reads a real file', async () => {
      const file = path.join(dir, 'config.json');
      await fs.writeFile(file, '{"env":"test","host":"127.0.0.1","port":3399}\n');
      expect(await loadGlobalConfig(file)).toEqual({ env: 'test', host: '127.0.0.1', port: 3399 });
    });

    it('names the file when it is missing or broken', async () => {
      await expect(loadGlobalConfig(path.join(dir, 'nope.json'), LABEL)).rejects.toThrow('config/config.json: cannot read: no such file');
      const bad = path.join(dir, 'bad.json');
      await fs.writeFile(bad, '{"host":"h","port":"x"}');
      await expect(loadGlobalConfig(bad)).rejects.toThrow(`${bad}: port: expected a port number`);
    });
  });
});
