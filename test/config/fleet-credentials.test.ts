// The fleet block's files as rq-mgr reads them at its start: contents for the etcd client, and refusals naming the field and the file.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEtcdCredentials } from '../../src/config/fleet-credentials.js';
import type { FleetConfig } from '../../src/config/fleet-config.js';
import { makeTestCerts, type TestCerts } from '../helpers/tls-certs.js';

let certs: TestCerts;
beforeAll(() => {
  certs = makeTestCerts();
});
afterAll(() => certs?.cleanup());

const base: FleetConfig = { name: 'prod', etcd: ['https://127.0.0.1:2379'], advertise: 'http://10.0.0.5:3333/' };
const read = (fleet: Partial<FleetConfig>) => readEtcdCredentials({ ...base, ...fleet }, 'config.json');
const file = (name: string, text: string) => {
  const p = path.join(certs.dir, name);
  fs.writeFileSync(p, text);
  return p;
};

describe('etcd credentials from the fleet block', () => {
  it('reads the CA, the client certificate and key, and the password without its line end', async () => {
    const c = await read({
      etcd_ca: certs.ca,
      etcd_cert: certs.clientCert,
      etcd_key: certs.clientKey,
      etcd_user: 'rq',
      etcd_password_file: file('pw', 's3 cret\r\n'),
    });
    expect(c.tls).toEqual({ ca: fs.readFileSync(certs.ca), cert: fs.readFileSync(certs.clientCert), key: fs.readFileSync(certs.clientKey) });
    expect(c.auth).toEqual({ user: 'rq', password: 's3 cret' });
  });

  it('has nothing to read without the fields, and no TLS for a user alone or a client certificate alone without a CA', async () => {
    expect(await read({})).toEqual({});
    expect(await read({ etcd_user: 'rq', etcd_password_file: file('pw2', 'x') })).toEqual({ auth: { user: 'rq', password: 'x' } });
    expect((await read({ etcd_cert: certs.clientCert, etcd_key: certs.clientKey })).tls).not.toHaveProperty('ca');
  });

  it.each([
    [
      'a CA file that is not there',
      () => ({ etcd_ca: '/nonexistent/ca.pem' }),
      'config.json: fleet.etcd_ca: "/nonexistent/ca.pem" cannot be read: no such file',
    ],
    ['a CA file of no PEM', () => ({ etcd_ca: file('junk.pem', 'not a certificate\n') }), 'fleet.etcd_ca: "', 'junk.pem" holds no PEM CA certificate ('],
    [
      'a directory for a certificate',
      () => ({ etcd_cert: certs.dir, etcd_key: certs.clientKey }),
      'fleet.etcd_cert: "',
      'rq-certs-',
      '" cannot be read: EISDIR',
    ],
    ['a key for a certificate', () => ({ etcd_cert: certs.clientKey, etcd_key: certs.clientKey }), 'fleet.etcd_cert: ', 'holds no PEM certificate'],
    ['a certificate for a key', () => ({ etcd_cert: certs.clientCert, etcd_key: certs.clientCert }), 'fleet.etcd_key: ', 'holds no PEM private key'],
    [
      "another certificate's key",
      () => ({ etcd_cert: certs.clientCert, etcd_key: certs.serverKey }),
      'fleet.etcd_key: "',
      'server-key.pem" is not the private key of the certificate in "',
      'client.pem"',
    ],
    [
      'an empty password file',
      () => ({ etcd_user: 'rq', etcd_password_file: file('empty', '\n') }),
      'fleet.etcd_password_file: "',
      'empty" is empty: it holds no password',
    ],
    [
      'a password file that is not there',
      () => ({ etcd_user: 'rq', etcd_password_file: '/nonexistent/pw' }),
      'fleet.etcd_password_file: "/nonexistent/pw" cannot be read: no such file',
    ],
  ])('refuses %s, naming the field and the file', async (_what, fields, ...texts) => {
    const err = await read(fields()).then(
      () => null,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.code).toBe('RQ_ERR_CONFIG');
    for (const t of texts) expect(err?.message).toContain(t);
  });
});
