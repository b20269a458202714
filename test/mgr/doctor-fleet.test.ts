// rq doctor's word on a host cut off from etcd, from rq-mgr's fleet view alone: a host etcd turned away (its user, its TLS), told by etcd's
// own words and given that fix, apart from one that does not reach etcd, whatever the endpoint's name holds.
import { describe, expect, it } from 'vitest';
import type { Answer } from '../../src/ipc/answer.js';
import type { FleetView, PeerCredential } from '../../src/ipc/fleet-reply.js';
import { fleetFindings } from '../../src/mgr/doctor-fleet.js';

const unreachable = (endpoint: string, reason: string): FleetView => ({
  fleet: 'prod',
  host: 'a',
  member: { state: 'unreachable', since: '2026-12-06T19:00:00.000Z', reason },
  etcd: { endpoints: [endpoint], reachable: false },
  hosts: [],
});

async function findingOf(view: FleetView) {
  const fleet = async (): Promise<Answer<FleetView>> => ({ ok: true, value: view, raw: ['ok', view] });
  const fleetCredential = async (): Promise<Answer<PeerCredential>> => ({ ok: false, code: 'RQ_ERR_NO_FLEET', text: 'no', raw: ['fail', 'no'] });
  const [f] = await fleetFindings({ fleet, fleetCredential }, '/srv/rq/config/config.json', undefined);
  return f;
}

describe('fleet findings of a host cut off from etcd', () => {
  it.each([
    ['a wrong password', '3 INVALID_ARGUMENT: etcdserver: authentication failed, invalid user ID or password', /^correct "etcd_user", or the password/],
    ['a role without the keys', '7 PERMISSION_DENIED: etcdserver: permission denied', /^correct "etcd_user", or the password/],
    ['a CA that did not sign etcd', '14 UNAVAILABLE: unable to verify the first certificate', /^correct "etcd_ca" \(the CA that signed etcd's certificate\)/],
  ])('%s: turned away by etcd, in its own words, with the fix of the user or TLS fields', async (_, cause, fix) => {
    const f = await findingOf(unreachable('https://10.0.0.1:2379', `etcd did not answer (https://10.0.0.1:2379): ${cause}`));
    expect(f.reason).toBe(
      `this host (a in fleet prod) is turned away by etcd at https://10.0.0.1:2379: ${cause}; its queues run, but the fleet's pools and shared limits do without it`,
    );
    expect(f.fix).toMatch(fix);
  });

  it('no answer, from an endpoint whose name says tls: does not reach etcd, and the fix is etcd or its address', async () => {
    const said = 'etcd did not answer (https://etcd-tls.example:2379): 14 UNAVAILABLE: No connection established';
    const f = await findingOf(unreachable('https://etcd-tls.example:2379', said));
    expect(f.reason).toBe(
      `this host (a in fleet prod) does not reach etcd at https://etcd-tls.example:2379: ${said}; its queues run, but the fleet's pools and shared limits do without it`,
    );
    expect(f.fix).toBe('start etcd there, or correct "etcd" in the fleet block of /srv/rq/config/config.json and bin/rq-mgr restart');
  });
});
