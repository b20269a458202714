// rq-install's fleet options: --fleet NAME --etcd URL[,URL...] --advertise URL [--fleet-host NAME] and etcd's TLS files and user become config.json's `fleet` block.
import net from 'node:net';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import { FLEET_NAME_EXPECTED, type FleetConfig, defaultHostName, isFleetName, isHttpUrl } from '../config/fleet-config.js';
import { browsersRefusePort } from '../config/browser-ports.js';
import { isLoopback } from '../config/exposure.js';
import type { OptionValue } from '../args.js';

/** The flags of etcd's TLS files and user, and the `fleet` field each writes. */
const ACCESS_OPTIONS = {
  'etcd-ca': 'etcd_ca',
  'etcd-cert': 'etcd_cert',
  'etcd-key': 'etcd_key',
  'etcd-user': 'etcd_user',
  'etcd-password-file': 'etcd_password_file',
} as const;
type AccessOption = keyof typeof ACCESS_OPTIONS;

export const FLEET_OPTIONS = ['fleet', 'etcd', 'advertise', 'fleet-host', ...(Object.keys(ACCESS_OPTIONS) as AccessOption[])] as const;

export const FLEET_USAGE = `  --fleet NAME       join the fleet NAME through etcd (docs/fleet.md); needs --etcd and --advertise
  --etcd URLS        etcd's client URLs, comma-separated (http://127.0.0.1:2379; http or https)
  --advertise URL    the base URL other hosts reach this host's web at (http://10.0.0.5:3333/);
                     the web listens on its port and, when its host is an address, on that
                     address, unless --port or --addr say otherwise
  --fleet-host NAME  this host's name in the fleet (default: the machine's host name); with
                     --force over a config with a fleet, this flag or any fleet flag alone
                     changes that field, the rest of the fleet block kept
  --etcd-ca PATH     a PEM CA bundle to verify etcd's server certificate with (https only;
                     default: the system's CAs)
  --etcd-cert PATH   a PEM client certificate for etcd's --client-cert-auth (https only),
  --etcd-key PATH      and its private key: both or neither
  --etcd-user NAME   the etcd user rq signs in as when etcd's auth is enabled,
  --etcd-password-file PATH  and a file holding its password: both or neither
                     (paths absolute; the files are read when rq-mgr starts)`;

function usage(message: string): RqError {
  return RqError.of('RQ_ERR_USAGE', message);
}

const given = (v: OptionValue | undefined): string => (typeof v === 'boolean' ? 'no value' : shown(v));

/** The `fleet` block, or undefined without --fleet; throws RQ_ERR_USAGE naming the flag, what it expects and what it got. */
export function fleetOption(opts: Record<string, OptionValue>): FleetConfig | undefined {
  if (opts.fleet === undefined) {
    const stray = FLEET_OPTIONS.find((k) => opts[k] !== undefined);
    if (stray) throw usage(`--${stray}: only with --fleet NAME (the fleet to join), or with --force over a config.json that has a fleet`);
    return undefined;
  }
  const { name, etcd, advertise, host, ...access } = fleetChanges(opts) as Partial<FleetConfig> & { name: string };
  if (etcd === undefined) throw usage(`--etcd: expected etcd client URLs, comma-separated (http or https), received nothing`);
  if (advertise === undefined)
    throw usage(`--advertise: expected the http:// or https:// base URL other hosts reach this host's web at (no user, query or fragment), received nothing`);
  accessPairs(opts, etcd);
  return { name, etcd, advertise, ...(host === undefined ? {} : { host }), ...access };
}

/**
 * Under `--force`, the fleet fields the flags given set, each checked alone: they change those fields of the
 * existing block and keep its others (a host renamed keeps its TLS files and lease_ttl_s). The block as merged
 * is checked by config.json's schema, which asks for the rest (a certificate's key, https for TLS).
 */
export function fleetChanges(opts: Record<string, OptionValue>): Partial<FleetConfig> | undefined {
  const out: Partial<FleetConfig> = {};
  const name = opts.fleet;
  if (name !== undefined && (typeof name !== 'string' || !isFleetName(name)))
    throw usage(`--fleet: expected a fleet name: ${FLEET_NAME_EXPECTED}; received ${given(name)}`);
  if (name !== undefined) out.name = name;
  if (opts.etcd !== undefined) {
    if (typeof opts.etcd !== 'string') throw usage(`--etcd: expected etcd client URLs, comma-separated (http or https), received ${given(opts.etcd)}`);
    out.etcd = opts.etcd.split(',').map((u) => u.trim());
    const bad = out.etcd.find((u) => !isHttpUrl(u));
    if (bad !== undefined)
      throw usage(`--etcd: expected http:// or https:// URLs such as http://127.0.0.1:2379 (no user, query or fragment), received ${shown(bad)}`);
  }
  const advertise = opts.advertise;
  if (advertise !== undefined && (typeof advertise !== 'string' || !isHttpUrl(advertise)))
    throw usage(
      `--advertise: expected the http:// or https:// base URL other hosts reach this host's web at (no user, query or fragment), received ${given(advertise)}`,
    );
  if (advertise !== undefined) {
    // Checked here, not only for a whole block: under --force a change of --advertise alone sets the web's port too.
    const { port } = advertisedListen(advertise, opts);
    if (port !== undefined && (port < 1 || port > 65535))
      throw usage(`--advertise: expected a port 1-65535 (the web listens on it without --port), received ${port}`);
    if (port !== undefined && browsersRefusePort(port))
      throw usage(`--advertise: expected a port browsers will open (the web listens on it without --port), received ${port}, one they refuse: choose another`);
    out.advertise = advertise;
  }
  const host = opts['fleet-host'];
  if (host !== undefined && (typeof host !== 'string' || !isFleetName(host)))
    throw usage(`--fleet-host: expected a host name: ${FLEET_NAME_EXPECTED}; received ${given(host)}`);
  if (host !== undefined) out.host = host;
  for (const [flag, field] of Object.entries(ACCESS_OPTIONS) as [AccessOption, (typeof ACCESS_OPTIONS)[AccessOption]][]) {
    const v = opts[flag];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v === '' || (flag !== 'etcd-user' && !path.isAbsolute(v)))
      throw usage(`--${flag}: expected ${ACCESS_EXPECTED[flag]}, received ${given(v)}`);
    out[field] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The fleet flags as rq-install takes them: a whole block, or under `--force` the fields they change
 * (`incomplete` says why they make no block alone, for a config.json that has no fleet to change).
 */
export function fleetFlags(opts: Record<string, OptionValue>, force: boolean): { fleet?: FleetConfig; incomplete?: RqError } {
  try {
    return { fleet: fleetOption(opts) };
  } catch (err) {
    // --force over a config with a fleet: --fleet-host alone renames the host (doctor's fix for a name taken).
    if (!force || !(err instanceof RqError)) throw err;
    return { fleet: fleetChanges(opts) as FleetConfig | undefined, incomplete: err };
  }
}

/** The port an --advertise URL names (`:80` too, which URL drops as its scheme's default), else undefined (a proxy's default port). */
function advertisedPort(url: string): number | undefined {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[^\]]*\]|[^:/?#]*)(?::(\d+))?/i.exec(url);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/**
 * Where the web listens, from --advertise, for what the command line leaves out: the port it names, and its host when
 * that is an address (a name is left to --addr: it may resolve to several, or to none of this machine's).
 */
export function advertisedListen(advertise: string, opts: Record<string, OptionValue>): { port?: number; addr?: string } {
  const port = opts.port === undefined ? advertisedPort(advertise) : undefined;
  const host = new URL(advertise).hostname.replace(/^\[|\]$/g, '');
  return { ...(port === undefined ? {} : { port }), ...(opts.addr === undefined && net.isIP(host) ? { addr: host } : {}) };
}

/**
 * What rq-install says of the fleet once installed: the name this host joins as when left to the machine's
 * (every rq root of one machine would take it, and the fleet lets one in), and a web the others cannot reach.
 */
export function fleetNotes(config: { addr: string; fleet?: FleetConfig }, hostname?: string): { to: 'stdout' | 'stderr'; line: string }[] {
  const notes: { to: 'stdout' | 'stderr'; line: string }[] = [];
  if (config.fleet && config.fleet.host === undefined)
    notes.push({
      to: 'stdout',
      line: `Fleet ${config.fleet.name}: this host joins as ${defaultHostName(hostname)}, the machine's host name; each rq root of this machine in the fleet needs a name of its own (--fleet-host NAME)`,
    });
  const unreachable = unreachableWarning(config);
  if (unreachable) notes.push({ to: 'stderr', line: unreachable });
  return notes;
}

/** Said after an install whose web listens on loopback only while the others are told a name that is not. */
export function unreachableWarning(config: { addr: string; fleet?: FleetConfig }): string | null {
  if (!config.fleet || !isLoopback(config.addr) || isLoopback(new URL(config.fleet.advertise).hostname)) return null;
  return (
    `rq-install: the web listens on ${config.addr} only ("addr"), but the other hosts are told ${config.fleet.advertise} ("advertise"): ` +
    'give --addr an address of this host they reach (or 0.0.0.0), unless a proxy here forwards to it'
  );
}

const ACCESS_EXPECTED: Record<AccessOption, string> = {
  'etcd-ca': "an absolute path of a PEM CA bundle that signed etcd's server certificate",
  'etcd-cert': 'an absolute path of a PEM client certificate',
  'etcd-key': "an absolute path of the client certificate's private key (PEM)",
  'etcd-user': 'an etcd user name',
  'etcd-password-file': "an absolute path of a file holding the etcd user's password",
};

/** Flags that go together: a certificate without its key, a user without a password, is no credential. */
const ACCESS_PAIRS: [AccessOption, AccessOption][] = [
  ['etcd-cert', 'etcd-key'],
  ['etcd-key', 'etcd-cert'],
  ['etcd-user', 'etcd-password-file'],
  ['etcd-password-file', 'etcd-user'],
];

/** Flags that only work together, and TLS only with https etcd URLs; refusals name the flag. */
function accessPairs(opts: Record<string, OptionValue>, urls: string[]): void {
  for (const [flag, other] of ACCESS_PAIRS)
    if (opts[flag] !== undefined && opts[other] === undefined) throw usage(`--${other}: expected ${ACCESS_EXPECTED[other]} beside --${flag}, received nothing`);
  const plain = urls.find((u) => u.startsWith('http:'));
  const tls = (['etcd-ca', 'etcd-cert', 'etcd-key'] as const).find((f) => opts[f] !== undefined);
  if (plain !== undefined && tls !== undefined) throw usage(`--${tls}: only with https:// etcd URLs (--etcd has ${shown(plain)})`);
}
