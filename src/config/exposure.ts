// Who the web answers to (the Host allow-list) and what an operator is warned about at start (docs/security.md).
import net from 'node:net';
import type { GlobalConfig } from './global-config.js';

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

export function isLoopback(addr: string): boolean {
  const host = addr.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host === '::1') return true;
  return net.isIPv4(host) && host.startsWith('127.');
}

/** Host names (lower case, no port) a request may name besides loopback ones: the config's host and addr, allowed_hosts. */
export function allowedHostNames(config: GlobalConfig): Set<string> {
  const names = [...LOOPBACK_NAMES, config.host, config.addr ?? '127.0.0.1', ...(config.allowed_hosts ?? [])];
  return new Set(names.map((n) => n.replace(/^\[|\]$/g, '').toLowerCase()));
}

/** The host part of a Host header (`name`, `name:port`, `[v6]:port`), lower case; null when malformed. */
export function hostHeaderName(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+))(?::(\d{1,5}))?$/.exec(header);
  if (!m) return null;
  return (m[1] ?? m[2]).toLowerCase();
}

/** What rq-mgr warns about at every start: a web reachable from the network without a password, secrets readable by others. */
export function exposureWarnings(config: GlobalConfig, configMode: number): string[] {
  const warnings: string[] = [];
  const addr = config.addr ?? '127.0.0.1';
  if (!isLoopback(addr) && !config.basic_auth) {
    warnings.push(
      `the web listens on ${addr}, beyond this machine, without basic_auth: anyone who can reach port ${config.port} can read and create messages (docs/security.md)`,
    );
  }
  if (config.allow_new_queue && !config.basic_auth) {
    warnings.push(
      'allow_new_queue is true without basic_auth: anyone who can reach the web can start queues that run the scripts of script_dirs (docs/security.md)',
    );
  }
  if (config.basic_auth && (configMode & 0o077) !== 0) {
    warnings.push(`config/config.json holds basic_auth passwords and is readable by others (mode ${(configMode & 0o777).toString(8)}): chmod 600 it`);
  }
  return warnings;
}
