// `rq fleet`: the fleet this host is in, as its rq-mgr sees it in etcd: each host, up or gone and since when, its URL and its queues.
import type { FleetView, QueueFigures } from '../ipc/fleet-reply.js';
import { JSON_FLAG } from './common-options.js';
import { askFleet, forgetHost } from './fleet-ask.js';
import { printRefusal } from './json-output.js';
import type { OptionSpec } from './command-spec.js';
import type { RqCommand } from './rq-command.js';
import { flagOpt, stringOpt } from './rq-options.js';

/** `q1 UP ready 3 running 1/2`: what another host would choose it by. */
const queueText = (name: string, q: QueueFigures): string => `${name} ${q.status} ready ${q.ready} running ${q.running}/${q.workers}`;

/** Said while etcd does not answer: the hosts are as this rq-mgr last saw them. */
export const staleNote = (v: FleetView): string => `etcd (${v.etcd.endpoints.join(',')}) does not answer: hosts as last seen`;

/** The header line, one line per host (columns padded to the widest), and a note while etcd does not answer. */
export function fleetLines(v: FleetView): string[] {
  const member = v.member.reason ? `${v.member.state}: ${v.member.reason}` : v.member.state;
  const rows = [
    ['HOST', 'STATE', 'SINCE', 'URL', 'QUEUES'],
    ...v.hosts.map((h) => [
      h.host,
      h.state,
      h.since ?? 'unknown',
      h.url,
      Object.entries(h.queues)
        .map(([n, q]) => queueText(n, q))
        .join(', ') || '-',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '));
  const head = `fleet ${v.fleet}: this host is ${v.host} (${member})`;
  const stale = v.etcd.reachable ? [] : [staleNote(v)];
  return [head, ...stale, ...lines];
}

const FORGET: OptionSpec = { name: 'forget', arg: 'HOST', help: 'forget HOST, gone from the fleet for good: it is no longer listed as gone' };

const fleet: RqCommand = {
  summary: 'show the fleet this host is in: every host (up, or gone and since when), its URL and its queues',
  options: [JSON_FLAG, FORGET],
  notes: [
    "Asks this root's rq-mgr, which keeps the fleet from etcd (docs/fleet.md). Each queue shows its status, ready",
    'messages, and running/worker slots. Exit 1 with the reason on a host without a fleet in config/config.json,',
    "and exit 1 after the view when this host's name is refused (another rq holds it: rq doctor says how to fix it).",
    '--json prints what GET /fleet.json answers.',
    '--forget HOST prints `ok HOST` once the fleet no longer keeps it; a host that is up, or was never seen, is refused (exit 1).',
  ],
  examples: ['rq fleet', 'rq fleet --json', 'rq fleet --forget old-host'],
  run: async ({ opts, root, io }) => {
    const json = flagOpt(opts, 'json');
    const host = stringOpt(opts, 'forget', 'the name of a host gone from the fleet');
    if (host !== undefined) {
      const forgotten = await forgetHost(root, host);
      if (!forgotten.ok) return printRefusal(io, forgotten, json);
      io.stdout(json ? JSON.stringify({ forgotten: host }) : `ok ${host}`);
      return 0;
    }
    const a = await askFleet(root);
    if (!a.ok) return printRefusal(io, a, json);
    if (json) io.stdout(JSON.stringify(a.value));
    else for (const line of fleetLines(a.value)) io.stdout(line);
    return a.value.member.state === 'refused' ? 1 : 0;
  },
};

export const FLEET_COMMANDS: Record<string, RqCommand> = { fleet };
