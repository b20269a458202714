// Test harness: throwaway certificates made with openssl in a temp dir: a CA, a server certificate for 127.0.0.1 and a client certificate it signed, and a second CA that signed neither.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  /** The CA that signed the server and client certificates. */
  ca: string;
  /** For etcd: IP:127.0.0.1 in its subjectAltName, as a client dialing https://127.0.0.1 checks. */
  serverCert: string;
  serverKey: string;
  /** For rq (CN rq). */
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing here: verifying etcd with it fails. */
  otherCa: string;
  cleanup(): void;
}

const openssl = (dir: string, args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });

/** A self-signed CA `name`.pem and its key. */
function makeCa(dir: string, name: string): void {
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'].concat([
      '-keyout',
      `${name}-key.pem`,
      '-out',
      `${name}.pem`,
      '-subj',
      `/CN=rq test ${name}`,
    ]),
  );
}

/** A certificate `name`.pem signed by ca.pem, for `cn`, with `ext` (an extension file's lines). */
function makeSigned(dir: string, name: string, cn: string, ext: string[]): void {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}-key.pem`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${cn}`,
  ]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext.join('\n') + '\n');
  openssl(
    dir,
    ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-days', '2'].concat([
      '-out',
      `${name}.pem`,
      '-extfile',
      `${name}.ext`,
    ]),
  );
}

export function makeTestCerts(): TestCerts {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-certs-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  makeSigned(dir, 'server', '127.0.0.1', ['subjectAltName=IP:127.0.0.1', 'extendedKeyUsage=serverAuth', 'keyUsage=digitalSignature']);
  makeSigned(dir, 'client', 'rq', ['extendedKeyUsage=clientAuth', 'keyUsage=digitalSignature']);
  const at = (f: string) => path.join(dir, f);
  return {
    dir,
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server-key.pem'),
    clientCert: at('client.pem'),
    clientKey: at('client-key.pem'),
    otherCa: at('other-ca.pem'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
