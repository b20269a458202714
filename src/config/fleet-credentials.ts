// What rq-mgr shows etcd: the fleet block's CA, client certificate and key, and user's password, read from their files and checked at its start.
import fs from 'node:fs/promises';
import { RqError, isErrno } from '../errors.js';
import type { FleetConfig } from './fleet-config.js';

/**
 * The contents of the files the fleet block names. Secrets: kept in memory for the etcd client,
 * never logged nor served (only the paths are in config.json).
 */
export interface EtcdCredentials {
  /** Present with https endpoints: the CA to verify etcd with (else the system's), and the client certificate and key. */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  auth?: { user: string; password: string };
}

type FileField = 'etcd_ca' | 'etcd_cert' | 'etcd_key' | 'etcd_password_file';

function problem(label: string, field: FileField, file: string, why: string): RqError {
  return RqError.of('RQ_ERR_CONFIG', `${label}: fleet.${field}: ${JSON.stringify(file)} ${why}`);
}

async function readField(label: string, field: FileField, file: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw problem(label, field, file, `cannot be read: ${isErrno(err, 'ENOENT') ? 'no such file' : (err as Error).message}`).causedBy(err);
  }
}

/** Parses one PEM item with node:crypto (loaded only here); a file that holds none is refused naming its field. */
function parsed<T>(label: string, field: FileField, file: string, what: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw problem(label, field, file, `holds no ${what} (${(err as Error).message})`).causedBy(err);
  }
}

/** The password as the file holds it, without the line end an editor or `echo` adds. */
function passwordOf(text: string): string {
  return text.replace(/\r?\n$/, '');
}

/**
 * Reads and checks the files `fleet` names; `label` is how errors name config.json. Refuses, naming
 * the field, a file that cannot be read, a CA or certificate that is no PEM certificate, a key that
 * is no PEM private key or not the certificate's, and an empty password.
 */
export async function readEtcdCredentials(fleet: FleetConfig, label: string): Promise<EtcdCredentials> {
  const out: EtcdCredentials = {};
  const crypto = process.getBuiltinModule('node:crypto');
  if (fleet.etcd_ca !== undefined || fleet.etcd_cert !== undefined) {
    const tls: NonNullable<EtcdCredentials['tls']> = {};
    if (fleet.etcd_ca !== undefined) {
      const file = fleet.etcd_ca;
      tls.ca = await readField(label, 'etcd_ca', file);
      parsed(label, 'etcd_ca', file, 'PEM CA certificate', () => new crypto.X509Certificate(tls.ca!));
    }
    if (fleet.etcd_cert !== undefined && fleet.etcd_key !== undefined) {
      const [certFile, keyFile] = [fleet.etcd_cert, fleet.etcd_key];
      tls.cert = await readField(label, 'etcd_cert', certFile);
      tls.key = await readField(label, 'etcd_key', keyFile);
      const cert = parsed(label, 'etcd_cert', certFile, 'PEM certificate', () => new crypto.X509Certificate(tls.cert!));
      const key = parsed(label, 'etcd_key', keyFile, 'PEM private key', () => crypto.createPrivateKey(tls.key!));
      if (!cert.checkPrivateKey(key)) throw problem(label, 'etcd_key', keyFile, `is not the private key of the certificate in ${JSON.stringify(certFile)}`);
    }
    out.tls = tls;
  }
  if (fleet.etcd_user !== undefined && fleet.etcd_password_file !== undefined) {
    const file = fleet.etcd_password_file;
    const password = passwordOf((await readField(label, 'etcd_password_file', file)).toString('utf8'));
    if (password === '') throw problem(label, 'etcd_password_file', file, 'is empty: it holds no password');
    out.auth = { user: fleet.etcd_user, password };
  }
  return out;
}
