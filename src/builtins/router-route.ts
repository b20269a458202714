// Routing one message by the rules (spec §12.3): the first matching rule, its chosen hosts, and the rewritten dests.
import type { RouterRule } from './router-rules.js';

export interface RoutedMessage {
  src?: unknown;
  dest?: unknown;
}

/** First rule whose src and dest patterns (those it has) match; the default (last) matches anything. */
export function matchRule(rules: RouterRule[], msg: RoutedMessage): RouterRule {
  for (const r of rules) {
    if (r.src && (typeof msg.src !== 'string' || !test(r.src, msg.src))) continue;
    if (r.dest && (typeof msg.dest !== 'string' || !test(r.dest, msg.dest))) continue;
    return r;
  }
  // parseRules always ends with a default rule; this is only reached with a hand-made list.
  return rules[rules.length - 1];
}

function test(re: RegExp, s: string): boolean {
  re.lastIndex = 0;
  return re.test(s);
}

const pick = <T>(list: T[], random: () => number): T => list[Math.min(list.length - 1, Math.floor(random() * list.length))];

/**
 * relay: every host of a flat route, or one random host of each sub-list of a nested one;
 * balance: one random host of all of them.
 */
export function selectHosts(rule: RouterRule, random: () => number = Math.random): string[] {
  const nested = rule.route.length > 0 && Array.isArray(rule.route[0]);
  if (rule.action === 'balance') return [pick((rule.route as (string | string[])[]).flat(), random)];
  if (rule.action !== 'relay') return [];
  return nested ? (rule.route as string[][]).map((l) => pick(l, random)) : [...(rule.route as string[])];
}

/**
 * The classic txform_host: a host given as an http URL is the new dest as it stands; otherwise
 * `:3333` is added when it has no port, and the dest's queue part (after /q/) is kept.
 */
export function txformHost(oldDest: string, host: string): string {
  if (/^http/i.test(host)) return host;
  const hostPort = /:\d+$/.test(host) ? host : `${host}:3333`;
  const q = oldDest.indexOf('/q/');
  if (/^https?:/i.test(oldDest) || oldDest.startsWith('/')) {
    // A URL (or the web form's /q/<name> path): keep what follows /q/.
    const rest = q >= 0 ? oldDest.slice(q + 3) : oldDest.replace(/^https?:\/\/[^/]*\/?/i, '').replace(/^\/+/, '');
    return `http://${hostPort}/q/${rest}`;
  }
  return `http://${hostPort}/q/${oldDest}`;
}
