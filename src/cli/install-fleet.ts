// rq-install's fleet options: --fleet NAME --etcd URL[,URL...] --advertise URL [--fleet-host NAME] become config.json's `fleet` block.
import { RqError, shown } from '../errors.js';
import { type FleetConfig, isFleetName, isHttpUrl } from '../config/fleet-config.js';
import type { OptionValue } from '../args.js';

export const FLEET_OPTIONS = ['fleet', 'etcd', 'advertise', 'fleet-host'] as const;

export const FLEET_USAGE = `  --fleet NAME       join the fleet NAME through etcd (docs/fleet.md); needs --etcd and --advertise
  --etcd URLS        etcd's client URLs, comma-separated (http://127.0.0.1:2379; http or https)
  --advertise URL    the base URL other hosts reach this host's web at (http://10.0.0.5:3333/)
  --fleet-host NAME  this host's name in the fleet (default: the machine's host name)`;

function usage(message: string): RqError {
  return RqError.of('RQ_ERR_USAGE', message);
}

const given = (v: OptionValue | undefined): string => (typeof v === 'boolean' ? 'no value' : shown(v));

/** The `fleet` block, or undefined without --fleet; throws RQ_ERR_USAGE naming the flag, what it expects and what it got. */
export function fleetOption(opts: Record<string, OptionValue>): FleetConfig | undefined {
  if (opts.fleet === undefined) {
    const stray = FLEET_OPTIONS.find((k) => opts[k] !== undefined);
    if (stray) throw usage(`--${stray}: only with --fleet NAME (the fleet to join)`);
    return undefined;
  }
  const name = opts.fleet;
  if (typeof name !== 'string' || !isFleetName(name))
    throw usage(`--fleet: expected a fleet name of letters, digits, ".", "_" or "-", received ${given(name)}`);
  const etcd = opts.etcd;
  if (typeof etcd !== 'string') throw usage(`--etcd: expected etcd client URLs, comma-separated (http or https), received ${given(etcd)}`);
  const urls = etcd.split(',').map((u) => u.trim());
  const bad = urls.find((u) => !isHttpUrl(u));
  if (bad !== undefined) throw usage(`--etcd: expected http:// or https:// URLs such as http://127.0.0.1:2379, received ${shown(bad)}`);
  const advertise = opts.advertise;
  if (typeof advertise !== 'string' || !isHttpUrl(advertise))
    throw usage(`--advertise: expected the http:// or https:// base URL other hosts reach this host's web at, received ${given(advertise)}`);
  const host = opts['fleet-host'];
  if (host !== undefined && (typeof host !== 'string' || !isFleetName(host)))
    throw usage(`--fleet-host: expected a host name of letters, digits, ".", "_" or "-", received ${given(host)}`);
  return { name, etcd: urls, advertise, ...(host === undefined ? {} : { host }) };
}
