// rq doctor's fleet checks: this host refused its name or cut off from etcd, and an advertise URL that does not lead back to this host's web.
import type { Answer } from '../ipc/answer.js';
import { type FleetView, type PeerCredential, basicAuthorization, isFleetView } from '../ipc/fleet-reply.js';
import type { WorkerInfo } from '../ipc/mgr-client.js';
import { HttpClient, bodyJson } from '../script-kit/http-client.js';

/** What the fleet checks ask rq-mgr. */
export interface FleetDoctorDeps {
  fleet: (timeoutMs?: number) => Promise<Answer<FleetView>>;
  fleetCredential: (timeoutMs?: number) => Promise<Answer<PeerCredential>>;
}

/** A finding as doctor.ts lists it; always a problem here. */
export interface FleetFinding {
  severity: 'problem';
  subject: 'fleet';
  reason: string;
  fix: string;
}

/** rq-mgr answers at once; the advertised web within this, or it is taken as not answering there. */
const ASK_MS = 3000;
const REACH_MS = 3000;
/** How long the web may run before its advertise URL must answer (it binds its port first). */
const WEB_SETTLE_S = 5;

/** etcd answered, and refused this host: its user or its TLS, told by what etcd or TLS said (docs/fleet.md, "TLS and etcd users"). */
const TURNED_AWAY = [
  {
    said: /authentication failed|invalid user ID or password|UNAUTHENTICATED|PERMISSION_DENIED|permission denied/i,
    fix: (file: string) =>
      `correct "etcd_user", or the password in the file "etcd_password_file" names, in the fleet block of ${file} (etcd's user, with a role that may read and write the fleet's keys), then bin/rq-mgr restart`,
  },
  {
    said: /certificate|ssl|tls|handshake/i,
    fix: (file: string) =>
      `correct "etcd_ca" (the CA that signed etcd's certificate), or "etcd_cert" and "etcd_key" (a client certificate etcd trusts), in the fleet block of ${file}, then bin/rq-mgr restart`,
  },
];

const problem = (reason: string, fix: string): FleetFinding => ({ severity: 'problem', subject: 'fleet', reason, fix });

/**
 * What answers `url`/fleet.json to the fleet's user, asked with the client the other hosts' relays use (node:http:
 * fetch would refuse ports that browsers refuse, which the hosts do not): a fleet view, or what came instead.
 */
async function askedThere(url: string, credential: PeerCredential): Promise<{ view: FleetView } | { answered: number } | { why: string }> {
  const http = new HttpClient({ headers: { authorization: basicAuthorization(credential) }, idleTimeoutMs: REACH_MS });
  try {
    // Hosts record their URL without its trailing slash, as peers join paths to it.
    const res = await http.get(`${url.replace(/\/+$/, '')}/fleet.json`);
    const body = bodyJson(res.body);
    return res.status === 200 && isFleetView(body) ? { view: body } : { answered: res.status };
  } catch (err) {
    const cause = (err as Error).cause as NodeJS.ErrnoException | undefined;
    return { why: cause?.code ?? (err as Error).message };
  } finally {
    http.close();
  }
}

/** The fleet's problems of this host; none on a host without a fleet. `configFile` is named in the fixes; `web` is rq-mgr's [web] worker. */
export async function fleetFindings(deps: FleetDoctorDeps, configFile: string, web: WorkerInfo | undefined): Promise<FleetFinding[]> {
  const a = await deps.fleet(ASK_MS).catch((err: Error) => ({ ok: false as const, code: 'RQ_ERR_NO_REPLY', text: err.message }));
  if (!a.ok) return a.code === 'RQ_ERR_NO_FLEET' ? [] : [problem(`rq-mgr did not say how this host stands in its fleet: ${a.text}`, "rq-mgr's log says why")];
  const v = a.value;
  const who = `this host (${v.host} in fleet ${v.fleet})`;
  if (v.member.state === 'refused')
    return [
      problem(
        `${who} is refused: ${v.member.reason ?? 'its name is held'}; it takes no part in the fleet, and takes the name once its holder is gone for a lease`,
        `give this host a name no other rq of the fleet uses ("host" in the fleet block of ${configFile}, or rq-install --force --fleet-host NAME), then bin/rq-mgr restart`,
      ),
    ];
  if (v.member.state === 'unreachable') {
    const said = v.member.reason ?? 'no answer';
    // etcd's client words every failure as no answer (naming the endpoint, whose name must not be taken for the cause); a refusal is etcd's answer.
    const cause = said.replace(/^etcd did not answer \([^)]*\): /, '');
    const turnedAway = TURNED_AWAY.find((t) => t.said.test(cause));
    const reason = turnedAway ? cause : said;
    return [
      problem(
        `${who} ${turnedAway ? 'is turned away by' : 'does not reach'} etcd at ${v.etcd.endpoints.join(', ')}: ${reason}; its queues run, but the fleet's pools and shared limits do without it`,
        turnedAway?.fix(configFile) ?? `start etcd there, or correct "etcd" in the fleet block of ${configFile} and bin/rq-mgr restart`,
      ),
    ];
  }
  const mine = v.hosts.find((h) => h.host === v.host && h.state === 'up');
  // A web that is starting, or that named its own problem (a port held by another program), says nothing of advertise.
  if (v.member.state !== 'member' || !mine || web?.status !== 'RUNNING' || web.problem || (web.uptime ?? 0) < WEB_SETTLE_S) return [];
  const credential = await deps.fleetCredential(ASK_MS).catch(() => null);
  if (!credential?.ok) return [];
  const there = await askedThere(mine.url, credential.value);
  // The same moment of its last change of state: a duplicate of the name, refused, answers with the name too.
  if ('view' in there && there.view.host === v.host && there.view.member.since === v.member.since) return [];
  const what =
    'view' in there
      ? `where another rq answers (${there.view.host} in fleet ${there.view.fleet})`
      : 'answered' in there
        ? `which answers ${there.answered} to the fleet's user, not this host's fleet view`
        : `which does not answer (${there.why})`;
  return [
    problem(
      `${who} is advertised at ${mine.url}, ${what}: the other hosts cannot deliver pool messages to it nor ask it of dependencies`,
      `set "advertise" in the fleet block of ${configFile} to the base URL the other hosts reach this host's web at, and "addr" and "port" to where the web listens (an address of this host the others reach, or 0.0.0.0), then bin/rq-mgr restart`,
    ),
  ];
}
