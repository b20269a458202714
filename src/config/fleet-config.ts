// The `fleet` block of config/config.json: which etcd this host joins, under which fleet and host name, and how others reach it.
import os from 'node:os';
import path from 'node:path';
import * as z from 'zod/mini';

/** Fleet and host names become etcd key parts and metric labels: letters, digits, `.`, `_` and `-`, as a DNS name has. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const FLEET_NAME_EXPECTED = 'a name of 1-63 letters, digits, ".", "_" or "-", starting with a letter or digit';

export const DEFAULT_LEASE_TTL_S = 10;
/** etcd grants no lease shorter than about 1.5 s (its election timeout); a day is past any use as a failure detector. */
const TTL_EXPECTED = 'a whole number of seconds 2-86400';

/** A fleet or host name as a key part and label can hold it. */
export const isFleetName = (v: string): boolean => NAME_RE.test(v);

/** True for an absolute http: or https: URL with a host and no credentials, query or fragment. */
export function isHttpUrl(v: string): boolean {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return false;
  }
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '' && u.username === '' && u.password === '' && u.search === '' && u.hash === '';
}

const name = z.string({ error: FLEET_NAME_EXPECTED }).check(z.regex(NAME_RE, { error: FLEET_NAME_EXPECTED }));
const httpUrl = (what: string) => z.string({ error: what }).check(z.refine(isHttpUrl, { error: what }));
const ETCD_URL = 'an etcd client URL such as "http://127.0.0.1:2379" (http or https; no user, query or fragment)';
const absolutePath = (what: string) => z.string({ error: what }).check(z.refine((v) => path.isAbsolute(v), { error: what }));
const USER_EXPECTED = 'an etcd user name (non-empty string)';

/** Fields given together or not at all: a client key without its certificate, a user without a password, is no credential. */
const PAIRS = [
  ['etcd_cert', 'etcd_key', 'the path of the client certificate\'s private key (PEM) beside "etcd_cert"'],
  ['etcd_key', 'etcd_cert', 'the path of the client certificate (PEM) beside "etcd_key"'],
  ['etcd_user', 'etcd_password_file', 'the path of a file holding the password of "etcd_user"'],
  ['etcd_password_file', 'etcd_user', 'the etcd user name whose password "etcd_password_file" holds'],
] as const;

/** TLS settings are for https endpoints: with an http one the certificates would be sent nowhere, or the client would refuse the mix. */
const TLS_FIELDS = ['etcd_ca', 'etcd_cert', 'etcd_key'] as const;

export const FleetConfigSchema = z
  .object(
    {
      name,
      etcd: z.array(httpUrl(ETCD_URL), { error: 'an array of etcd client URLs' }).check(z.minLength(1, { error: 'at least one etcd client URL' })),
      host: z.optional(name),
      advertise: httpUrl('the base URL other hosts reach this host\'s web at, such as "http://10.0.0.5:3333/" (http or https; no user, query or fragment)'),
      lease_ttl_s: z.optional(z.int({ error: TTL_EXPECTED }).check(z.minimum(2, { error: TTL_EXPECTED }), z.maximum(86_400, { error: TTL_EXPECTED }))),
      // TLS to etcd and etcd's users (docs/fleet.md "TLS and etcd users"): paths, read by rq-mgr at its start (fleet-credentials.ts).
      etcd_ca: z.optional(absolutePath("an absolute path of a PEM CA bundle that signed etcd's server certificate")),
      etcd_cert: z.optional(absolutePath('an absolute path of a PEM client certificate')),
      etcd_key: z.optional(absolutePath("an absolute path of the PEM client certificate's private key")),
      etcd_user: z.optional(z.string({ error: USER_EXPECTED }).check(z.minLength(1, { error: USER_EXPECTED }))),
      etcd_password_file: z.optional(absolutePath("an absolute path of a file holding the etcd user's password")),
      // config.json is read by more than rq-mgr (its mode is only warned about): the password stays in a file of its own.
      etcd_password: z.optional(z.custom<never>(() => false, { error: 'no password in config.json: the path of a file holding it, as "etcd_password_file"' })),
    },
    { error: 'an object {"name": ..., "etcd": [urls], "advertise": url}' },
  )
  .check((ctx) => {
    const v: Record<string, unknown> = ctx.value;
    for (const [field, other, expected] of PAIRS)
      if (v[field] !== undefined && v[other] === undefined) ctx.issues.push({ code: 'custom', path: [other], message: expected, input: v[other] });
    const plain = ctx.value.etcd.find((u) => u.startsWith('http:'));
    if (plain === undefined) return;
    for (const field of TLS_FIELDS)
      if (v[field] !== undefined)
        ctx.issues.push({
          code: 'custom',
          path: [field],
          message: `only with https:// etcd URLs ("fleet.etcd" has ${JSON.stringify(plain)})`,
          input: v[field],
        });
  });

export type FleetConfig = z.output<typeof FleetConfigSchema>;

/** The fleet block with its defaults filled in: what rq-mgr joins with. */
export interface FleetSettings {
  name: string;
  etcd: string[];
  host: string;
  /** Without a trailing slash, so `${advertise}/fleet.json` is a URL. */
  advertise: string;
  leaseTtlS: number;
}

/** The machine's host name as far as it is a valid fleet host name (its first label when the whole one is not). */
export function defaultHostName(hostname: string = os.hostname()): string {
  if (NAME_RE.test(hostname)) return hostname;
  const first = hostname.split('.')[0];
  return NAME_RE.test(first) ? first : 'rq-host';
}

export function fleetSettings(cfg: FleetConfig, hostname?: string): FleetSettings {
  return {
    name: cfg.name,
    etcd: cfg.etcd,
    host: cfg.host ?? defaultHostName(hostname),
    advertise: cfg.advertise.replace(/\/+$/, ''),
    leaseTtlS: cfg.lease_ttl_s ?? DEFAULT_LEASE_TTL_S,
  };
}
