// rq doctor's fleet checks: this host refused its name or cut off from etcd, and an advertise URL that does not lead back to this host's web.
import type { Answer } from '../ipc/answer.js';
import { type FleetView, type PeerCredential, basicAuthorization, isFleetView } from '../ipc/fleet-reply.js';

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

/** rq-mgr answers at once; the advertised web gets as long as a peer's call would take to connect. */
const ASK_MS = 3000;
const REACH_MS = 3000;

const problem = (reason: string, fix: string): FleetFinding => ({ severity: 'problem', subject: 'fleet', reason, fix });

/**
 * Asks `url`/fleet.json as another host of the fleet would (user rq-fleet): the host that answers there,
 * or why none did. A host is this one when it answers with this host's name and the same moment of its
 * last change of state (a duplicate of the name, refused, answers with the name too).
 */
async function reachedThere(url: string, credential: PeerCredential): Promise<{ view: FleetView } | { why: string }> {
  try {
    // Hosts record their URL without its trailing slash, as peers join paths to it.
    const res = await fetch(`${url.replace(/\/+$/, '')}/fleet.json`, {
      headers: { accept: 'application/json', authorization: basicAuthorization(credential) },
      signal: AbortSignal.timeout(REACH_MS),
    });
    const body: unknown = await res.json().catch(() => null);
    if (!res.ok || !isFleetView(body)) return { why: `it answered ${res.status}${res.ok ? ' with no fleet view' : ''}` };
    return { view: body };
  } catch (err) {
    // fetch's own error says only "fetch failed"; its cause has the errno (ECONNREFUSED) or the reason (a port fetch refuses).
    const e = err as Error & { cause?: { code?: string; message?: string } };
    return { why: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

/** The fleet's problems of this host; none on a host without a fleet. `configFile` is named in the fixes. */
export async function fleetFindings(deps: FleetDoctorDeps, configFile: string): Promise<FleetFinding[]> {
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
  if (v.member.state === 'unreachable')
    return [
      problem(
        `${who} does not reach etcd at ${v.etcd.endpoints.join(', ')}: ${v.member.reason ?? 'no answer'}; its queues run, but the fleet's pools and shared limits do without it`,
        `start etcd there, or correct "etcd" in the fleet block of ${configFile} and bin/rq-mgr restart`,
      ),
    ];
  const mine = v.hosts.find((h) => h.host === v.host && h.state === 'up');
  const credential = await deps.fleetCredential(ASK_MS).catch(() => null);
  if (v.member.state !== 'member' || !mine || !credential?.ok) return [];
  const there = await reachedThere(mine.url, credential.value);
  const same = 'view' in there && there.view.host === v.host && there.view.member.since === v.member.since;
  if (same) return [];
  const reached = 'view' in there ? `reaches another rq (${there.view.host} in fleet ${there.view.fleet})` : `does not reach this host's web (${there.why})`;
  return [
    problem(
      `${who} is advertised at ${mine.url}, which ${reached}: the other hosts cannot deliver pool messages to it nor ask it of dependencies`,
      `set "advertise" in the fleet block of ${configFile} to the base URL the other hosts reach this host's web at (its port is "port" there, unless a proxy is in between), then bin/rq-mgr restart`,
    ),
  ];
}
